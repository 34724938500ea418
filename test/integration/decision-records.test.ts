// Decisions carry what a model waits for as codes: the store compares them as JSON to skip a pass that
// says again what the last one said, and a refused reservation comes back from its activity with the
// decision to record in its place (the workflow no longer rewrites it).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createActivities } from '../../src/activities/index.ts';
import { PolicyCache } from '../../src/activities/policy-cache.ts';
import { SimCluster } from '../../src/cluster/sim/sim-cluster.ts';
import type { Decision, Pending } from '../../src/domain/decision.ts';
import { DEFAULT_POLICY_SETTINGS, EMPTY_MEMORY } from '../../src/domain/snapshot.ts';
import type { Sql } from '../../src/store/db.ts';
import { pendingModels, recordDecision } from '../../src/store/decisions.ts';
import { putLoadReport } from '../../src/store/load.ts';
import { putModel } from '../../src/store/models.ts';
import { putNode } from '../../src/store/nodes.ts';
import { readQuotaPolicy } from '../../src/store/snapshot.ts';
import { decision } from '../support/decisions.ts';
import { stopOwnServices } from '../support/services.ts';
import { freshStore, idleReconcilers } from '../support/stack.ts';

const noRoom: Pending = { code: 'no_room', profile: 'one', needs: { gpus: 1 } };
const backoff: Pending = { code: 'backoff', profile: 'one' };
const waiting = (model: string, pending?: Pending[]): Decision =>
  decision(model, {
    reason: 'scale up: 1 in flight and no replica',
    ...(pending ? { pending } : {}),
    inputs: { ...decision(model).inputs, in_flight: 1 },
  });

describe('decisions with codes in the store', () => {
  let sql: Sql;
  before(async () => {
    sql = await freshStore();
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    await stopOwnServices();
  });
  const count = async (model: string) =>
    Number((await sql`select count(*)::int as n from decisions where model = ${model}`)[0].n);

  it('a pass that waits for the same codes is not recorded again; other codes or none are', async () => {
    for (const [pending, rows] of [
      [[noRoom], 1],
      [[noRoom], 1],
      [[noRoom, backoff], 2],
      [[backoff, noRoom], 3],
      [undefined, 4],
      [undefined, 4],
      [[noRoom], 5],
    ] as const) {
      await recordDecision(sql, waiting('a', pending && [...pending]), undefined, true);
      assert.equal(await count('a'), rows, `after ${JSON.stringify(pending)}`);
    }
  });

  it('after a decision stored before codes (a sentence), the first with codes is recorded', async () => {
    await sql`insert into decisions (model, action, reason, inputs)
      values ('b', 'none', 'scale up: ...', ${sql.json({ pending: 'no room for one (needs 1 GPU)' })})`;
    await recordDecision(sql, waiting('b', [noRoom]), undefined, true);
    assert.equal(await count('b'), 2);
  });

  it('pendingModels: those whose newest decision waits, codes or sentence', async () => {
    await putModel(sql, { name: 'a', owner: null, min_replicas: 0, max_replicas: 2, profiles: [] });
    await putModel(sql, { name: 'b', owner: null, min_replicas: 0, max_replicas: 2, profiles: [] });
    await putModel(sql, { name: 'c', owner: null, min_replicas: 0, max_replicas: 2, profiles: [] });
    await recordDecision(sql, waiting('c'));
    assert.deepEqual((await pendingModels(sql)).sort(), ['a', 'b']);
  });
});

describe('a refused reservation', () => {
  let sql: Sql;
  before(async () => {
    sql = await freshStore();
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
  });

  it('answers with the decision to record: nothing done, the refusal said, the plan kept', async () => {
    await putNode(sql, { name: 'gpu-1', capacity: { gpus: 1 }, gpu_model: null, labels: {} });
    const one = { name: 'one', priority: 0, resources: { gpus: 1 }, default_concurrency: 1 };
    for (const name of ['m', 'rival']) {
      await putModel(sql, { name, owner: null, min_replicas: 1, max_replicas: 1, profiles: [one] });
    }
    const driver = new SimCluster(
      sql,
      idleReconcilers,
      { startDelayMs: 1e10, drainGraceMs: 1e10 },
      { warn() {} },
    );
    const activities = createActivities({
      sql,
      driver,
      policyCache: new PolicyCache(() => readQuotaPolicy(sql), 3_600_000),
      config: { policy: DEFAULT_POLICY_SETTINGS, resyncMs: 1000 },
    });
    await putLoadReport(sql, 'm', 'test', 0, 0, {
      now: Date.now(),
      staleMs: DEFAULT_POLICY_SETTINGS.loadStaleMs,
      maxSources: DEFAULT_POLICY_SETTINGS.loadSourcesMax,
    });
    const [mine, theirs] = await Promise.all(
      ['m', 'rival'].map((model) => activities.planPass({ model, memory: EMPTY_MEMORY })),
    );
    assert.ok(mine.exists && theirs.exists);
    assert.equal(mine.decision.action, 'place');
    assert.deepEqual(await activities.reserveReplica({ decision: theirs.decision, replicaId: 'rival-1' }), {
      reserved: true,
    });

    const refused = await activities.reserveReplica({ decision: mine.decision, replicaId: 'm-1' });
    assert.ok(!refused.reserved, 'the rival took the room');
    assert.deepEqual(refused.decision, {
      ...mine.decision,
      action: 'none',
      reason: `${mine.decision.reason}; not done: ${refused.why}, planning again`,
    });
  });
});
