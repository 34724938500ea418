import postgres from 'postgres';
import type { Sql } from './db.ts';
import { LOCKS } from './locks.ts';

/** Told when this process comes to hold the lease, and when it no longer does. */
export interface LeaseHolder {
  won(): void | Promise<void>;
  /** Its session ended or stopped answering, or the process gives the lease up: stop at once. */
  lost(reason: string): void | Promise<void>;
}

export interface LeaseTimings {
  /** How often a contender tries to take the lease, and its holder checks that it still holds it. */
  checkMs: number;
  /** A check not answered within this long counts as a lost session. */
  answerMs: number;
  /**
   * Postgres ends a session that sent nothing for this long (idle_session_timeout, Postgres 14+) and so
   * frees its lease: a holder cut off from the store has stopped before, at checkMs + answerMs at most.
   */
  silenceMs: number;
}

/**
 * A killed holder is replaced within 2 checks (its session ends with its process; a contender takes the
 * lock at its next check and starts at the one after); one cut off from the store, within silenceMs + 2 checks.
 */
export const LEASE_TIMINGS: LeaseTimings = { checkMs: 1000, answerMs: 2000, silenceMs: 5000 };

type State = 'contending' | 'taken' | 'held';

/**
 * What at most one process runs at a time, held as a session advisory lock on a connection of its own.
 * A lock rather than a lease row with an expiry: Postgres frees it the moment the holder's session ends,
 * so a killed holder is replaced at the next check instead of after an expiry, and no clock or migration
 * is involved. The session must be Postgres's own, not one of a pooler in transaction mode (PgBouncer).
 * A contender that takes the lock starts only at its next check, once the lock is still its own: by
 * then a holder whose session was ended has been told by its closed socket and stopped.
 */
export class Lease {
  private state: State = 'contending';
  private session: Sql;
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> = Promise.resolve();
  /** The holder's won and lost, one after the other: a loss is acted on before the lease is won again. */
  private told: Promise<void> = Promise.resolve();
  private stopping = false;
  private readonly timings: LeaseTimings;

  constructor(
    private readonly pool: Sql,
    private readonly lock: keyof typeof LOCKS,
    private readonly holder: LeaseHolder,
    private readonly options: {
      /** Who contends: the session's application_name, which pg_stat_activity shows. */
      name: string;
      timings?: LeaseTimings;
      log?: Pick<Console, 'error'>;
    },
  ) {
    this.timings = options.timings ?? LEASE_TIMINGS;
    if (this.timings.checkMs + this.timings.answerMs >= this.timings.silenceMs) {
      throw new Error(
        'a lease holder must give up (checkMs + answerMs) before Postgres frees it (silenceMs)',
      );
    }
    this.session = this.openSession();
    this.schedule(0);
  }

  get held(): boolean {
    return this.state === 'held';
  }

  /** Gives the lease up (the holder is told first) and ends the session. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.checking;
    this.drop('this process stops');
    await this.told;
    await this.session.end({ timeout: 1 });
  }

  private schedule(ms: number) {
    this.timer = setTimeout(() => {
      this.checking = this.check().finally(() => {
        if (!this.stopping) this.schedule(this.timings.checkMs);
      });
    }, ms);
  }

  private async check(): Promise<void> {
    await this.told;
    try {
      const query = this.state === 'contending' ? this.tryTake() : this.stillHeld();
      if (!(await within(this.timings.answerMs, query)))
        return this.drop('its session no longer holds the lock');
      if (this.state === 'contending') this.state = 'taken';
      else if (this.state === 'taken') {
        this.state = 'held';
        this.tell(() => this.holder.won());
      }
    } catch (error) {
      this.drop(`the store did not answer: ${error instanceof Error ? error.message : String(error)}`);
      // A session in doubt may hold the lock unknown to us: ending it frees whatever it holds.
      const doubtful = this.session;
      this.session = this.openSession();
      await doubtful.end({ timeout: 0 }).catch(() => {});
    }
  }

  private async tryTake(): Promise<boolean> {
    const [row] = await this.session<{ taken: boolean }[]>`
      select pg_try_advisory_lock(${LOCKS[this.lock]}) as taken`;
    return row.taken;
  }

  private async stillHeld(): Promise<boolean> {
    // pg_locks shows a one-key advisory lock as the high and low halves of its bigint.
    const key = LOCKS[this.lock];
    const [row] = await this.session<{ held: boolean }[]>`
      select exists (
        select 1 from pg_locks where locktype = 'advisory' and granted and pid = pg_backend_pid()
          and classid = ${Math.floor(key / 2 ** 32)} and objid = ${key % 2 ** 32} and objsubid = 1
      ) as held`;
    return row.held;
  }

  private drop(reason: string) {
    const was = this.state;
    this.state = 'contending';
    if (was === 'held') this.tell(() => this.holder.lost(reason));
  }

  private tell(event: () => void | Promise<void>) {
    this.told = this.told
      .then(event)
      .catch((error) => (this.options.log ?? console).error(`lease ${this.lock}: ${String(error)}`));
  }

  /** One connection of the pool's settings, kept for as long as it lives; its close loses the lease. */
  private openSession(): Sql {
    const { host, port, path, database, user, pass, ssl, connection, target_session_attrs } =
      this.pool.options;
    const session: Sql = postgres({
      // postgres.js takes back the host and port lists it parsed (its types name one) and the password.
      ...({ host, port, pass } as object),
      path,
      database,
      user,
      ssl,
      target_session_attrs,
      max: 1,
      connect_timeout: this.timings.answerMs / 1000,
      max_lifetime: null,
      fetch_types: false,
      onnotice: () => {},
      connection: {
        ...connection,
        application_name: this.options.name,
        idle_session_timeout: this.timings.silenceMs,
      },
      onclose: () => {
        if (this.session === session) this.drop('its connection to the store closed');
      },
    });
    return session;
  }
}

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
