import { ACTIVE_STATES, type ClusterNode, type Replica } from '../domain/cluster.ts';
import type { Measurement, Model } from '../domain/model.ts';
import type { Quota } from '../domain/quota.ts';
import type { Resources } from '../domain/resources.ts';
import type { Scope, ScopeKey } from '../domain/scope.ts';
import { displayName } from '../domain/scope-names.ts';
import type { PolicySettings, Snapshot } from '../domain/snapshot.ts';
import { complete, subtract, sum, zero } from './resources.ts';

/**
 * A snapshot indexed once for all the decisions made on it (as Kueue decides on its cache).
 *
 * Convention: the entry points (decideModel, scopeFigures, sizeForThroughput, previewQuota) take a
 * Snapshot or a View and build the view only when given a snapshot; everything beneath them takes a
 * View. A pass over many models builds one view and hands it to each.
 */
export interface View {
  readonly snapshot: Snapshot;
  readonly now: number;
  readonly settings: PolicySettings;
  readonly scopes: ReadonlyMap<ScopeKey, Scope>;
  readonly quotas: ReadonlyMap<ScopeKey, Quota>;
  readonly models: ReadonlyMap<string, Model>;
  readonly nodes: ReadonlyMap<string, ClusterNode>;
  /** Replicas that hold room (pending, starting, ready, draining), oldest first. */
  readonly active: readonly Replica[];
  /**
   * The scope itself, then its parent, up to its org. Empty for no owner and for a key that names no
   * scope: such a model counts toward the cluster only.
   */
  chain(key: ScopeKey | null): readonly ScopeKey[];
  /** The owner of the replica's model (null when the model has none or is gone). */
  ownerOf(replica: Replica): ScopeKey | null;
  /** Active replicas of a model, oldest first. */
  replicasOfModel(model: string): readonly Replica[];
  /** Active replicas on a node, oldest first. */
  replicasOnNode(node: string): readonly Replica[];
  /** The model's measurements by profile name. */
  measurementsOf(model: string): ReadonlyMap<string, Measurement>;
  /**
   * Capacity minus what the node's active replicas hold, on every dimension (absent capacity = 0).
   * Negative while victims of a reclaim drain next to the replica reserved in their place.
   */
  free(node: string): Resources;
  /**
   * Capacity minus what the node's pending, starting and ready replicas hold: its room once its
   * draining replicas have stopped. Never negative while reservations keep within it.
   */
  freeAfterDrains(node: string): Resources;
  /** Org `Acme`, team `Acme / ml`, project `Acme/ml/training`. */
  displayName(key: ScopeKey): string;
}

/**
 * Replicas oldest first:
 * 1. created_at, earlier first;
 * 2. replica ID.
 */
export function olderFirst(a: Replica, b: Replica): number {
  if (a.created_at !== b.created_at) return a.created_at - b.created_at;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

const NONE: readonly never[] = [];
const NO_MEASUREMENTS: ReadonlyMap<string, Measurement> = new Map();

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

export function buildView(snapshot: Snapshot): View {
  const scopes = new Map(snapshot.scopes.map((scope) => [scope.key, scope]));
  const quotas = new Map(snapshot.quotas.map((quota) => [quota.scope, quota]));
  const models = new Map(snapshot.models.map((model) => [model.name, model]));
  const nodes = new Map(snapshot.nodes.map((node) => [node.name, node]));
  const active = snapshot.replicas.filter((r) => ACTIVE_STATES.includes(r.state)).sort(olderFirst);
  const byModel = groupBy(active, (r) => r.model);
  const byNode = groupBy(active, (r) => r.node);

  const measurements = new Map<string, Map<string, Measurement>>();
  for (const m of snapshot.measurements) {
    const ofModel = measurements.get(m.model) ?? new Map<string, Measurement>();
    ofModel.set(m.profile, m);
    measurements.set(m.model, ofModel);
  }

  const free = new Map<string, Resources>();
  const freeAfterDrains = new Map<string, Resources>();
  for (const node of snapshot.nodes) {
    const onNode = byNode.get(node.name) ?? NONE;
    const capacity = complete(node.capacity);
    free.set(node.name, subtract(capacity, sum(onNode.map((r) => r.resources))));
    const staying = onNode.filter((r) => r.state !== 'draining');
    freeAfterDrains.set(node.name, subtract(capacity, sum(staying.map((r) => r.resources))));
  }

  const chains = new Map<ScopeKey, readonly ScopeKey[]>();
  const chain = (key: ScopeKey | null): readonly ScopeKey[] => {
    if (key === null) return NONE;
    let found = chains.get(key);
    if (!found) {
      const keys: ScopeKey[] = [];
      // The visited check guards against a parent loop in bad data.
      for (
        let s = scopes.get(key);
        s && !keys.includes(s.key);
        s = s.parent ? scopes.get(s.parent) : undefined
      ) {
        keys.push(s.key);
      }
      found = keys;
      chains.set(key, found);
    }
    return found;
  };

  const names = new Map<ScopeKey, string>();
  return {
    snapshot,
    now: snapshot.now,
    settings: snapshot.settings,
    scopes,
    quotas,
    models,
    nodes,
    active,
    chain,
    ownerOf: (replica) => models.get(replica.model)?.owner ?? null,
    replicasOfModel: (model) => byModel.get(model) ?? NONE,
    replicasOnNode: (node) => byNode.get(node) ?? NONE,
    measurementsOf: (model) => measurements.get(model) ?? NO_MEASUREMENTS,
    free: (node) => free.get(node) ?? zero(),
    freeAfterDrains: (node) => freeAfterDrains.get(node) ?? zero(),
    displayName: (key) => {
      let name = names.get(key);
      if (name === undefined) {
        name = displayName(scopes, key);
        names.set(key, name);
      }
      return name;
    },
  };
}

/** The replica's model is owned by `scope` or a scope beneath it. */
export const isUnder = (view: View, scope: ScopeKey, replica: Replica): boolean =>
  view.chain(view.ownerOf(replica)).includes(scope);

/** The entry points' convention: use the view given, or index the snapshot given. */
export const viewOf = (input: Snapshot | View): View => ('snapshot' in input ? input : buildView(input));

/** Computes a figure once per view (holdings, protection...): every model's decision on it shares it. */
export function perView<T>(compute: (view: View) => T): (view: View) => T {
  const cache = new WeakMap<View, T>();
  return (view) => {
    if (!cache.has(view)) cache.set(view, compute(view));
    return cache.get(view)!;
  };
}

/**
 * The view at another time: what buildView gives for the same snapshot at `now` (nothing it indexes
 * depends on the time), without indexing it again.
 */
export function viewAt(view: View, now: number): View {
  return now === view.now ? view : { ...view, now, snapshot: { ...view.snapshot, now } };
}
