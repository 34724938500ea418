import type { Context } from 'hono';
import { identityOf } from '../auth/guard.ts';
import { DEFAULT_SCOPE_CAPS, type ScopeCaps } from '../config.ts';
import { ApiError } from '../contracts/errors.ts';
import { parseScopeKey } from '../domain/scope.ts';
import type { Tx } from '../store/db.ts';
import { lockUntilCommit } from '../store/locks.ts';
import { countWithin } from '../store/scope-counts.ts';

const VARIABLE: Record<keyof ScopeCaps, string> = {
  models: 'LLMGW_MAX_MODELS_PER_SCOPE',
  scopes: 'LLMGW_MAX_PROJECTS_PER_SCOPE',
};

/**
 * Refuses (403) a model or a scope that a token bound to a scope (an operator) would create beyond
 * its scope's cap: each model costs a reconciler and each scope a share of every pass, so that one
 * team's token cannot grow them without bound. A token bound to no scope (an admin) is not capped.
 * Counted in the creating transaction, under a lock on the caller's scope: two requests at once
 * cannot both take the last place.
 */
export async function refuseBeyondScopeCap(
  c: Context,
  tx: Tx,
  what: keyof ScopeCaps,
  caps: ScopeCaps = DEFAULT_SCOPE_CAPS,
): Promise<void> {
  const { scope } = identityOf(c);
  if (scope === null) return;
  await lockUntilCommit(tx, 'scopeCreations', scope);
  if ((await countWithin(tx, scope))[what] < caps[what]) return;
  const { label } = await c.get('scopeTree')();
  const things =
    what === 'models'
      ? 'models within its scope'
      : `${parseScopeKey(scope)?.kind === 'org' ? 'teams and projects' : 'projects'} beneath its scope`;
  throw new ApiError(
    403,
    `an operator of ${label(scope)} may create at most ${caps[what]} ${things} (${VARIABLE[what]}); delete one first, or ask an admin`,
  );
}
