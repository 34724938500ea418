import { SERVING_STATES } from '../domain/cluster.ts';
import type { Model } from '../domain/model.ts';
import { olderFirst } from '../policy/view.ts';
import { bestFitNode, type Controller, replicaConcurrency, type World } from './world.ts';

/** What a peer autoscaler sees of one model at a tick. */
export interface PeerObservation {
  now: number;
  /** The replica count it last asked for (a Deployment's spec.replicas). */
  replicas: number;
  /** Replicas ready to serve. */
  ready: number;
  running: number;
  waiting: number;
  /** In-flight requests one replica serves at SLO: the same measured figure llmgw uses. */
  concurrency: number;
  min: number;
  max: number;
}

/** A peer's rule for one model: the replica count it wants now. */
export type PeerRule = (seen: PeerObservation) => number;

/**
 * A peer as a platform runs it: its rule sets a replica count per model, and the cluster follows
 * (a Deployment): new replicas go where llmgw's best fit puts them, so only the scaling rules differ;
 * with no room they wait and are placed when room frees; surplus ones go not-ready first, then newest.
 * No quotas, no reclaim, no preemption: none of the peers has them.
 */
export function peerController(name: string, ruleFor: (model: Model) => PeerRule): Controller {
  const rules = new Map<string, PeerRule>();
  const wanted = new Map<string, number>();
  return {
    name,
    step(world) {
      for (const model of world.scenario.models) {
        let rule = rules.get(model.name);
        if (!rule) {
          rule = ruleFor(model);
          rules.set(model.name, rule);
        }
        const replicas = world.cluster.of(model.name).filter((r) => SERVING_STATES.includes(r.state));
        const pool = world.pools.get(model.name)!;
        const seen: PeerObservation = {
          now: world.now,
          replicas: wanted.get(model.name) ?? replicas.length,
          ready: replicas.filter((r) => r.state === 'ready').length,
          running: pool.running,
          waiting: pool.waiting,
          concurrency: replicaConcurrency(world.scenario, model, model.profiles[0].name),
          min: model.min_replicas,
          max: model.max_replicas,
        };
        const want = Math.min(model.max_replicas, Math.max(model.min_replicas, rule(seen)));
        wanted.set(model.name, want);
        follow(world, model, want);
      }
    },
  };
}

/** The cluster follows the count: places what is missing while room lasts, drains what is over. */
function follow(world: World, model: Model, want: number) {
  const serving = world.cluster.of(model.name).filter((r) => SERVING_STATES.includes(r.state));
  const over = [...serving]
    .sort((a, b) => Number(a.state === 'ready') - Number(b.state === 'ready') || olderFirst(b, a))
    .slice(0, Math.max(0, serving.length - want));
  for (const replica of over) world.cluster.drain(replica.id, world.now);
  const profile = model.profiles[0];
  for (let n = serving.length; n < want; n++) {
    const node = bestFitNode(world, profile);
    if (!node) return;
    world.cluster.add(model.name, profile, node, world.now, true);
  }
}
