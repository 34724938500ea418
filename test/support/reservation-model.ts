// The machinery of the model-based tests of the reservation path (test/integration/reservation-ordering,
// holds-counted-once): a small world of scopes, quotas, nodes and models in a real Postgres, the real
// activities and driver ticks as fast-check commands, and the checks every command is followed by.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createActivities, type PassPlan } from '../../src/activities/index.ts';
import { PolicyCache } from '../../src/activities/policy-cache.ts';
import { SimCluster } from '../../src/cluster/sim/sim-cluster.ts';
import { type Decision, RESERVING_ACTIONS } from '../../src/domain/decision.ts';
import type { Profile } from '../../src/domain/model.ts';
import type { Quota } from '../../src/domain/quota.ts';
import type { Resources } from '../../src/domain/resources.ts';
import { DEFAULT_POLICY_SETTINGS, EMPTY_MEMORY } from '../../src/domain/snapshot.ts';
import { claims, compareClaims, nextClaim } from '../../src/policy/claims.ts';
import { isBorrowed } from '../../src/policy/guarantee.ts';
import { add, complete, fitsWithin, subtract, sum } from '../../src/policy/resources.ts';
import { buildView, type View } from '../../src/policy/view.ts';
import type { Sql } from '../../src/store/db.ts';
import { putLoadReport } from '../../src/store/load.ts';
import { putModel } from '../../src/store/models.ts';
import { putNode } from '../../src/store/nodes.ts';
import { putQuota } from '../../src/store/quotas.ts';
import { readQuotaPolicy, readSnapshot } from '../../src/store/snapshot.ts';
import { createScope } from '../../src/store/tenancy.ts';
import { idleReconcilers } from './stack.ts';

export const SETTINGS = { ...DEFAULT_POLICY_SETTINGS, scaleDownWindowMs: 0 };

export const gpus = (n: number): Resources => ({ gpus: n, cores: n * 4, memory_gib: n * 32 });
export const profile = (n: number, engine?: Profile['engine']): Profile => ({
  name: `x${n}`,
  priority: 1,
  resources: gpus(n),
  default_concurrency: 1,
  ...(engine ? { engine } : {}),
});

/** One org's teams (each with its quota, if any) and the models they own. */
export interface WorldSpec {
  org: { id: string; quota?: Omit<Quota, 'scope'> };
  teams: Record<string, Omit<Quota, 'scope'> | undefined>;
  nodes: [name: string, gpus: number][];
  /** A model of no team has no owner: it counts toward no scope, and is always borrowed. */
  models: readonly { name: string; team: string | null; profile: Profile; min_replicas?: number }[];
}

export interface Real {
  sql: Sql;
  activities: ReturnType<typeof createActivities>;
  /** The driver's ticks: one readies replicas that started an hour ago, one stops those draining for an hour. */
  readyTick: SimCluster;
  stopTick: SimCluster;
  /** The plan each reconciler made last, acted on later: what a concurrent reconciler sees is stale. */
  plans: Map<string, PassPlan>;
  /** Reservations made in this run: numbers replica IDs. */
  reservations: number;
  /** What happened over all runs, so the test shows it reached what it checks. */
  seen: Record<string, number>;
}

/** Stores the world's scopes, quotas, nodes and models, and makes the activities and ticks that act on it. */
export async function buildWorld(sql: Sql, spec: WorldSpec): Promise<Real> {
  const orgKey = `org:${spec.org.id}` as const;
  await createScope(sql, 'org', spec.org.id, spec.org.id, null);
  if (spec.org.quota) await putQuota(sql, { scope: orgKey, ...spec.org.quota }, 'test');
  for (const [team, quota] of Object.entries(spec.teams)) {
    await createScope(sql, 'team', team, team, spec.org.id);
    if (quota) await putQuota(sql, { scope: `team:${team}`, ...quota }, 'test');
  }
  for (const [name, n] of spec.nodes) {
    await putNode(sql, { name, capacity: gpus(n), gpu_model: null, labels: {} });
  }
  for (const m of spec.models) {
    await putModel(sql, {
      name: m.name,
      owner: m.team === null ? null : `team:${m.team}`,
      min_replicas: m.min_replicas ?? 0,
      max_replicas: 4,
      profiles: [m.profile],
    });
  }
  const quiet = { warn() {} };
  const readyTick = new SimCluster(
    sql,
    idleReconcilers,
    { startDelayMs: 3_600_000, drainGraceMs: 1e10 },
    quiet,
  );
  const stopTick = new SimCluster(
    sql,
    idleReconcilers,
    { startDelayMs: 1e10, drainGraceMs: 3_600_000 },
    quiet,
  );
  const activities = createActivities({
    sql,
    driver: readyTick,
    policyCache: new PolicyCache(() => readQuotaPolicy(sql), 3_600_000),
    config: { policy: SETTINGS, resyncMs: 1000 },
  });
  return { sql, activities, readyTick, stopTick, plans: new Map(), reservations: 0, seen: {} };
}

/** Clears what a run leaves (replicas, decisions, load) and reports each model's first load. */
export async function startRun(real: Real, initial: Record<string, number>) {
  await real.sql`truncate replicas, decisions, load_reports`;
  real.plans.clear();
  real.reservations = 0;
  for (const [m, n] of Object.entries(initial)) await reportLoad(real.sql, m, n);
}

export const readView = async (sql: Sql): Promise<View> =>
  buildView(await readSnapshot(sql, Date.now(), SETTINGS));
export const reportLoad = (sql: Sql, model: string, inFlight: number) =>
  putLoadReport(sql, model, 'test', inFlight, 0, {
    now: Date.now(),
    staleMs: SETTINGS.loadStaleMs,
    maxSources: SETTINGS.loadSourcesMax,
  });

/** What runs on a node (starting, ready, draining): each holds its resources on the machine. */
const running = (view: View, node: string) =>
  sum(
    view
      .replicasOnNode(node)
      .filter((r) => r.state !== 'pending')
      .map((r) => r.resources),
  );

/** The room a node has once its draining replicas stopped: capacity less what is not draining. */
const roomAfterDrains = (view: View, node: string) =>
  subtract(
    complete(view.nodes.get(node)!.capacity),
    sum(
      view
        .replicasOnNode(node)
        .filter((r) => r.state !== 'draining')
        .map((r) => r.resources),
    ),
  );

/**
 * No node runs more than it has; under every limit, what runs (starting, ready, draining) fits it, and
 * so does what stays once drains end (pending, starting, ready). A replica reserved by a preemption
 * stands beside its draining victims until they stop, and starts only then.
 */
export async function checkInvariants(sql: Sql, what: string): Promise<View> {
  const view = await readView(sql);
  for (const node of view.nodes.values()) {
    const runs = running(view, node.name);
    assert.ok(
      fitsWithin(runs, complete(node.capacity)),
      `${what}: node ${node.name} runs ${JSON.stringify(runs)} > ${JSON.stringify(node.capacity)}: ` +
        JSON.stringify(view.replicasOnNode(node.name).map((r) => [r.id, r.state, r.resources.gpus])),
    );
  }
  for (const [scope, quota] of view.quotas) {
    if (!quota.limit) continue;
    const under = view.active.filter((r) => view.chain(view.ownerOf(r)).includes(scope));
    for (const [which, kept] of [
      ['runs', under.filter((r) => r.state !== 'pending')],
      ['keeps once drains end', under.filter((r) => r.state !== 'draining')],
    ] as const) {
      const total = sum(kept.map((r) => r.resources));
      assert.ok(
        fitsWithin(total, quota.limit),
        `${what}: ${scope} ${which} ${JSON.stringify(total)}, past its limit`,
      );
    }
  }
  return view;
}

/** A preemption that was reserved: every victim had a strictly lower claim than the new replica, on the state before. */
function checkPreemption(before: View, decision: Decision) {
  const model = before.models.get(decision.model)!;
  const serving = before.replicasOfModel(model.name).filter((r) => r.state !== 'draining').length;
  const claim = nextClaim(model, serving);
  const claimed = claims(before);
  for (const victim of decision.victims ?? []) {
    const its = claimed.get(victim.replica);
    assert.ok(
      its && compareClaims(its, claim) < 0,
      `${decision.model} preempted ${victim.replica} of no lower claim`,
    );
  }
}

/** A reclaim that was reserved: every victim was borrowed, and none of them could have been spared. */
function checkReclaim(before: View, decision: Decision) {
  const victims = decision.victims ?? [];
  const need = decision.resources!;
  for (const victim of victims) {
    assert.ok(isBorrowed(before, victim.replica), `protected replica ${victim.replica} was reclaimed`);
    const rest = sum(victims.filter((v) => v !== victim).map((v) => v.resources));
    assert.ok(
      !fitsWithin(need, add(roomAfterDrains(before, decision.node!), rest)),
      `${decision.model} reclaimed ${victim.replica} on ${decision.node} without needing it: ${decision.reason}`,
    );
  }
}

export async function plan(real: Real, m: string) {
  const planned = await real.activities.planPass({ model: m, memory: EMPTY_MEMORY });
  if (planned.exists) real.plans.set(m, planned);
}

export async function startReserved(real: Real, m: string) {
  for (const replicaId of real.plans.get(m)?.startable ?? []) await start(real, replicaId);
}

/**
 * Acts on the model's last plan, however old: reserve (a burst, perhaps: `single` keeps only its first
 * replica) and start, reclaim, or drain.
 */
export async function commit(real: Real, m: string, single = false) {
  const planned = real.plans.get(m);
  real.plans.delete(m);
  const decision = planned?.decision;
  if (decision?.action === 'remove') {
    await real.activities.drainReplicas({ replicaIds: [decision.replica!], reason: decision.reason });
  }
  if (!decision || !RESERVING_ACTIONS.includes(decision.action)) return;
  const before = await readView(real.sql);
  const replicaId = `${m}-${++real.reservations}`;
  const also = (single ? [] : (planned.alsoPlace ?? [])).map((next) => ({
    decision: next,
    replicaId: `${m}-${++real.reservations}`,
  }));
  const reservation = await real.activities.reserveReplica({
    decision,
    replicaId,
    ...(also.length > 0 && { also }),
  });
  if (!reservation.reserved) return;
  // A plan the state under the lock refused is made again there: what was reserved is checked.
  const reserved = reservation.decision ?? decision;
  seen(real, reserved === decision ? reserved.action : `${reserved.action} planned again`);
  const more = reservation.also ?? [];
  if (more.length > 0) seen(real, 'burst');
  if (also.length > more.length) seen(real, 'burst cut under the lock');
  if (reserved.action === 'reclaim') checkReclaim(before, reserved);
  else if (reserved.action === 'preempt') checkPreemption(before, reserved);
  else for (const id of [replicaId, ...more.map((step) => step.replicaId)]) await start(real, id);
}

async function start(real: Real, replicaId: string) {
  seen(real, (await real.activities.startReplica({ replicaId })) ? 'start' : 'start not yet');
}

export const seen = (real: Real, what: string) => {
  real.seen[what] = (real.seen[what] ?? 0) + 1;
};

/**
 * The driver's tick once the k-th starting (or draining) replica's time has come: its start delay (or
 * grace) is an hour and that replica is made an hour older, so replicas move one at a time, in any order.
 */
async function tickOne(real: Real, state: 'starting' | 'draining', k: number, driver: SimCluster) {
  const replicas = await real.sql<
    { id: string }[]
  >`select id from replicas where state = ${state} order by id`;
  if (replicas.length === 0) return;
  const { id } = replicas[k % replicas.length];
  await real.sql`update replicas set updated_at = updated_at - interval '2 hours' where id = ${id}`;
  await driver.tick();
}

type Command = fc.AsyncCommand<object, Real>;

/**
 * The commands over the world's models, each followed by `check` (by default the invariants above): load
 * changes, plans, starts, commits of plans however stale, whole passes, and driver ticks in any order.
 */
export function commandsFor(
  names: readonly string[],
  check: (real: Real, label: string) => Promise<unknown> = (real, label) => checkInvariants(real.sql, label),
): fc.Arbitrary<Command>[] {
  const command = (label: string, run: (real: Real) => Promise<void>): Command => ({
    check: () => true,
    async run(_model, real) {
      await run(real);
      await check(real, label);
    },
    toString: () => label,
  });
  const modelName = fc.constantFrom(...names);
  return [
    fc
      .tuple(modelName, fc.integer({ min: 0, max: 4 }))
      .map(([m, n]) => command(`load ${m}=${n}`, ({ sql }) => reportLoad(sql, m, n))),
    modelName.map((m) => command(`plan ${m}`, (real) => plan(real, m))),
    modelName.map((m) => command(`start reserved ${m}`, (real) => startReserved(real, m))),
    // Every reconciler planning at once, then every one starting what its plan said: the widest race.
    fc.constant(
      command('plan all', async (real) => {
        for (const m of names) await plan(real, m);
      }),
    ),
    fc.constant(
      command('start reserved all', async (real) => {
        for (const m of names) await startReserved(real, m);
      }),
    ),
    modelName.map((m) => command(`commit ${m}`, (real) => commit(real, m))),
    // A whole pass at once, as an uncontended reconciler runs it: it fills nodes and limits quickly.
    modelName.map((m) =>
      command(`pass ${m}`, async (real) => {
        await plan(real, m);
        await startReserved(real, m);
        await commit(real, m);
      }),
    ),
    fc.nat().map((k) => command(`ready tick ${k}`, (real) => tickOne(real, 'starting', k, real.readyTick))),
    fc.nat().map((k) => command(`stop tick ${k}`, (real) => tickOne(real, 'draining', k, real.stopTick))),
  ];
}

/** Each model's load when a run starts (in flight; one replica serves one). */
export const initialLoads = (names: readonly string[]): fc.Arbitrary<Record<string, number>> =>
  fc.record(Object.fromEntries(names.map((m) => [m, fc.integer({ min: 1, max: 4 })])));

/**
 * Runs a model-based property for up to `numRuns` runs within `budgetMs`: the test file's 300 s
 * timeout holds on a loaded machine too, and the runs made are reported. A counterexample fails as
 * fc.assert's would; fewer than `minRuns` runs in the budget fail as too little checked.
 */
export async function checkWithinBudget<T>(
  property: fc.IAsyncProperty<T>,
  options: { numRuns: number; budgetMs: number; minRuns: number; replay: object },
  diagnostic: (message: string) => void,
): Promise<void> {
  const details = await fc.check(property, {
    numRuns: options.numRuns,
    includeErrorInReport: true,
    interruptAfterTimeLimit: options.budgetMs,
    markInterruptAsFailure: false,
    ...options.replay,
  });
  if (details.failed) throw new Error(fc.defaultReportMessage(details));
  diagnostic(`${details.numRuns} of ${options.numRuns} runs within ${options.budgetMs / 1000} s`);
  const enough = Math.min(options.minRuns, options.numRuns);
  assert.ok(
    details.numRuns >= enough,
    `only ${details.numRuns} runs within ${options.budgetMs / 1000} s; at least ${enough} check enough`,
  );
}
