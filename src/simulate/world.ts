import type { Model, Profile } from '../domain/model.ts';
import type { Snapshot } from '../domain/snapshot.ts';
import { pickNode } from '../policy/placement.ts';
import { concurrencyOf } from '../policy/profiles.ts';
import { buildView } from '../policy/view.ts';
import type { Scenario } from './scenario.ts';
import type { ServingPool } from './serving-pool.ts';
import type { VirtualCluster } from './virtual-cluster.ts';

/** What a policy sees and acts on at one tick of the simulated clock. */
export interface World {
  now: number;
  scenario: Scenario;
  cluster: VirtualCluster;
  pools: ReadonlyMap<string, ServingPool>;
  /** Models whose replicas became ready or stopped at this tick. */
  changed: ReadonlySet<string>;
}

/** A scaling policy under test: llmgw's reconcilers, or one of its peers. */
export interface Controller {
  readonly name: string;
  step(world: World): void;
}

/** In-flight requests one replica of the model's profile serves at SLO: the same for every policy. */
export function replicaConcurrency(scenario: Scenario, model: Model, profileName: string): number {
  const measurement = scenario.measurements.find((m) => m.model === model.name && m.profile === profileName);
  return concurrencyOf(
    model.profiles.find((p) => p.name === profileName),
    measurement,
    scenario.settings,
  );
}

/** Slots of each of the model's ready replicas: what serves requests now. */
export function readySlots(world: Pick<World, 'scenario' | 'cluster'>, model: Model): Map<string, number> {
  return new Map(
    world.cluster
      .of(model.name)
      .filter((r) => r.state === 'ready')
      .map((r) => [r.id, replicaConcurrency(world.scenario, model, r.profile)]),
  );
}

/** The cluster as the policy core reads it (stopped replicas are gone: they hold nothing). */
export function snapshotOf(
  world: Pick<World, 'now' | 'scenario' | 'cluster'>,
  load: Snapshot['load'],
): Snapshot {
  const { scenario } = world;
  return {
    now: world.now,
    scopes: scenario.scopes,
    quotas: scenario.quotas,
    models: scenario.models,
    measurements: scenario.measurements,
    nodes: [...world.cluster.nodes],
    replicas: world.cluster.replicas.map((r) => ({ ...r })),
    load,
    settings: scenario.settings,
  };
}

/** Where llmgw's placement would put a new replica of the profile (best fit), or null: no room. */
export const bestFitNode = (world: Pick<World, 'now' | 'scenario' | 'cluster'>, profile: Profile) =>
  pickNode(buildView(snapshotOf(world, {})), profile);
