import type { ClusterDriver } from '../../domain/cluster-driver.ts';
import type { Reconcilers } from '../../reconcilers/client.ts';
import { Repeating } from '../../repeating.ts';
import type { Sql } from '../../store/db.ts';
import type { SimServing } from './serving.ts';

export interface SimOptions {
  /** How long a replica takes from starting to ready (LLMGW_SIM_START_DELAY_MS). */
  startDelayMs: number;
  /** How long a draining replica serves its in-flight requests before it stops (LLMGW_DRAIN_GRACE_S). */
  drainGraceMs: number;
  /** How often the cluster moves replicas along. */
  tickMs?: number;
}

/**
 * A simulated cluster on the nodes the store holds whose driver is `sim` (agents run the others). Its
 * replicas live in the store only: a replica is ready `startDelayMs` after it started (or failed, when its profile's engine says `fail_start: true`)
 * and stopped `drainGraceMs` after it began to drain. Keeping no state in memory is what lets a worker
 * crash and restart without losing or doubling a replica.
 */
export class SimCluster implements ClusterDriver {
  private readonly loop: Repeating;

  constructor(
    private readonly sql: Sql,
    private readonly reconcilers: Reconcilers,
    private readonly options: SimOptions,
    log: Pick<Console, 'warn'> = console,
    /** Runs the engines of ready replicas and reports their load; none: replicas only change state. */
    private readonly serving: SimServing | null = null,
  ) {
    this.loop = new Repeating(
      async () => {
        await this.tick();
        await this.serving?.sync();
      },
      options.tickMs ?? 200,
      (error) => log.warn(`sim cluster: ${String(error)}`),
    );
  }

  async start(): Promise<void> {
    // The replica is already marked starting; tick() readies it after the start delay.
  }

  async drain(): Promise<void> {
    // The replica is already marked draining; tick() stops it after the grace period.
  }

  /** Moves replicas whose time has come and tells the reconcilers that care. */
  async tick(): Promise<void> {
    const { sql } = this;
    const started = await sql<{ model: string; node: string; state: string }[]>`
      update replicas r set state = case when f.fails then 'failed' else 'ready' end,
        reason = case when f.fails then 'the simulated engine failed to start' else r.reason end,
        updated_at = now()
      from profiles p
        -- fail_start, inline or a sim runtime's parameter (given, else its default)
        left join runtimes rt on rt.name = p.runtime
        cross join lateral (select coalesce(p.engine->>'fail_start', p.params->>'fail_start',
          rt.spec->'params'->'fail_start'->>'default') = 'true' as fails) f
      where p.model = r.model and p.name = r.profile and r.state = 'starting'
        and r.node in (select name from nodes where driver = 'sim')
        and r.updated_at <= now() - ${this.options.startDelayMs} * interval '1 millisecond'
      returning r.model, r.node, r.state`;
    const stopped = await sql<{ model: string; node: string; preempted_for: string | null }[]>`
      update replicas set state = 'stopped', updated_at = now()
      where state = 'draining' and node in (select name from nodes where driver = 'sim')
        and updated_at <= now() - ${this.options.drainGraceMs} * interval '1 millisecond'
      returning model, node, preempted_for`;
    // Room freed on a node (a replica stopped or failed) may be what a reservation there waits for.
    const freed = [...stopped, ...started.filter((r) => r.state === 'failed')].map((r) => r.node);
    const waiting = freed.length
      ? await sql<{ model: string }[]>`
          select distinct model from replicas where state = 'pending' and node in ${sql(freed)}`
      : [];
    // A model a stopped replica was preempted for places its replica now.
    const preemptedFor = stopped.flatMap((row) => (row.preempted_for ? [{ model: row.preempted_for }] : []));
    const models = new Set([...started, ...stopped, ...waiting, ...preemptedFor].map((row) => row.model));
    if (models.size > 0) await this.reconcilers.tell([...models], 'replicaChanged');
  }

  run(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.serving?.stop();
  }
}
