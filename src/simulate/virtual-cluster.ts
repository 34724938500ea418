import type { ClusterNode, Replica } from '../domain/cluster.ts';
import type { Profile } from '../domain/model.ts';

/** Why a replica drains when another model takes its room: reclaimed for a guarantee, or preempted. */
export interface Taking {
  for: string;
  /** The replica reserved in the victim's place. */
  reservation: string;
  by: 'reclaim' | 'preempt';
}

/**
 * The replicas on `llmgw simulate`'s cluster, in virtual time, and their lifecycle as the sim driver
 * (`SimCluster` of src/cluster/sim/, in real time) runs it: a started replica is ready `startDelayMs`
 * later (model load time), a draining one stops `drainGraceMs` after it began to drain, and a pending
 * one (reserved) holds its room until it is started.
 */
export class VirtualCluster {
  /** Active replicas (pending, starting, ready, draining), oldest first. */
  replicas: Replica[] = [];
  /** GPU-milliseconds held per model, by active replicas. */
  readonly gpuMs = new Map<string, number>();
  /** Every replica start (churn), in order. */
  starts: { model: string; at: number }[] = [];
  /** Every drain of a replica that had started, in order; `takenBy` for a reclaim's or a preemption's victim. */
  readonly drains: { model: string; at: number; takenBy?: Taking['by'] }[] = [];
  private readonly since = new Map<string, number>();
  private serial = 0;

  constructor(
    readonly nodes: readonly ClusterNode[],
    private readonly timing: { startDelayMs: number; drainGraceMs: number },
  ) {}

  /** A new replica of the profile on the node: pending (reserved) or, with `start`, starting. */
  add(model: string, profile: Profile, node: string, now: number, start: boolean): Replica {
    const replica: Replica = {
      id: `${model}-${String(++this.serial).padStart(6, '0')}`,
      model,
      profile: profile.name,
      node,
      resources: profile.resources,
      state: 'pending',
      created_at: now,
    };
    this.replicas.push(replica);
    if (start) this.start(replica, now);
    return replica;
  }

  start(replica: Replica, now: number): void {
    replica.state = 'starting';
    this.since.set(replica.id, now);
    this.starts.push({ model: replica.model, at: now });
  }

  /** Drains a replica (for another model, when `taking` says so); one still pending never ran, so it stops at once. */
  drain(id: string, now: number, taking?: Taking): void {
    const replica = this.replicas.find((r) => r.id === id);
    if (!replica || replica.state === 'draining') return;
    if (replica.state === 'pending') {
      this.replicas = this.replicas.filter((r) => r !== replica);
      return;
    }
    replica.state = 'draining';
    // As the store does: the model a preemption's victim drains for is woken when it stops.
    replica.preempted_for = taking?.by === 'preempt' ? taking.for : null;
    replica.reclaimed_for = taking?.reservation ?? null;
    this.drains.push({ model: replica.model, at: now, takenBy: taking?.by });
    this.since.set(replica.id, now);
  }

  /** Moves replicas on to ready and stopped as their time comes; the models whose replicas changed. */
  advance(now: number): Set<string> {
    const changed = new Set<string>();
    const { startDelayMs, drainGraceMs } = this.timing;
    for (const r of this.replicas) {
      const since = this.since.get(r.id) ?? now;
      if (r.state === 'starting' && now - since >= startDelayMs) {
        r.state = 'ready';
        changed.add(r.model);
      } else if (r.state === 'draining' && now - since >= drainGraceMs) {
        r.state = 'stopped';
        changed.add(r.model);
      }
    }
    const stopped = this.replicas.filter((r) => r.state === 'stopped');
    for (const r of stopped) this.since.delete(r.id);
    if (stopped.length > 0) this.replicas = this.replicas.filter((r) => r.state !== 'stopped');
    return changed;
  }

  /** Counts the GPUs that active replicas hold over [from, to). */
  accrue(from: number, to: number): void {
    for (const r of this.replicas) {
      this.gpuMs.set(r.model, (this.gpuMs.get(r.model) ?? 0) + (r.resources.gpus ?? 0) * (to - from));
    }
  }

  of(model: string): Replica[] {
    return this.replicas.filter((r) => r.model === model);
  }
}
