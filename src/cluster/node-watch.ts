import type { Reconcilers } from '../reconcilers/client.ts';
import { Repeating } from '../repeating.ts';
import type { Sql } from '../store/db.ts';
import { loseSilentNodes } from '../store/node-liveness.ts';

/**
 * Loses the agents' nodes silent for `lostAfterMs` with their replicas (store/node-liveness.ts), and
 * tells the reconcilers of those replicas' models, which replace them elsewhere. Run by the one worker
 * that holds the sim-cluster lease, so the check runs in exactly one place; it keeps nothing in memory.
 */
export class NodeWatch {
  private readonly loop: Repeating;

  constructor(
    private readonly sql: Sql,
    private readonly reconcilers: Reconcilers,
    private readonly lostAfterMs: number,
    private readonly log: Pick<Console, 'warn'> = console,
    /** How often it looks: a few times within the window, at most once a second. */
    everyMs = Math.min(1000, lostAfterMs / 4),
  ) {
    this.loop = new Repeating(
      () => this.check(),
      everyMs,
      (error) => log.warn(`node watch: ${String(error)}`),
    );
  }

  async check(): Promise<void> {
    const lost = await loseSilentNodes(this.sql, this.lostAfterMs);
    for (const node of lost.nodes)
      this.log.warn(`node ${node} lost: its agent was silent for over ${this.lostAfterMs / 1000} s`);
    if (lost.models.length > 0) await this.reconcilers.tell(lost.models, 'replicaChanged');
  }

  run(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}
