import type { Counter } from 'prom-client';
import { recordEvent } from '../store/audit.ts';
import type { Sql } from '../store/db.ts';
import { PerKeyLimit } from './per-key-limit.ts';

/** Why a request had no valid bearer token: the `reason` of llmgw_auth_failures_total. */
export const AUTH_FAILURE_REASONS = ['missing', 'malformed', 'unknown', 'expired'] as const;
export type AuthFailureReason = (typeof AUTH_FAILURE_REASONS)[number];

const SAID: Record<AuthFailureReason, string> = {
  missing: 'no Authorization header',
  malformed: 'an Authorization header that is not Bearer <token>',
  unknown: 'a token that is unknown or was revoked',
  expired: 'an expired token',
};

const MINUTE = 60_000;

/** What is done with a request refused for want of a valid token, beyond its 401. */
export interface AuthFailures {
  /** Counted always; logged at most once a minute per source address, with how many were not. */
  refused(reason: AuthFailureReason, address: string): void;
  /**
   * Refused as well, and told in the audit log (which token, when it expired, from where) at most once
   * a minute per token: the 401 says no more than for an unknown token, so that it tells nobody that
   * the token existed.
   */
  expired(token: { name: string; expires_at: string }, address: string): void;
}

export function authFailures(deps: {
  sql: Sql;
  counter: Counter<'reason'>;
  log: Pick<Console, 'warn' | 'error'>;
  now: () => number;
}): AuthFailures {
  const lines = new PerKeyLimit(MINUTE);
  const audits = new PerKeyLimit(MINUTE);
  for (const reason of AUTH_FAILURE_REASONS) deps.counter.inc({ reason }, 0);
  const refused = (reason: AuthFailureReason, address: string) => {
    deps.counter.inc({ reason });
    const held = lines.admit(address, deps.now());
    if (held === null) return;
    const more = held > 0 ? ` (and ${held} more from there since the last such line)` : '';
    deps.log.warn(`llmgw api: 401 for ${address}: ${SAID[reason]}${more}`);
  };
  return {
    refused,
    expired(token, address) {
      refused('expired', address);
      const held = audits.admit(token.name, deps.now());
      if (held === null) return;
      // Not awaited: the 401 is not to wait (and so take longer) for a write an unknown token lacks.
      recordEvent(
        deps.sql,
        { actor: token.name, action: 'token.expired-use', target: `token:${token.name}` },
        { expires_at: token.expires_at, address, earlier_uses_not_recorded: held },
      ).catch((error) => deps.log.error('llmgw api: recording the use of an expired token failed:', error));
    },
  };
}
