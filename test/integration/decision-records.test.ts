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

  const rivals = async (names: string[], nodes: string[]) => {
    for (const node of nodes)
      await putNode(sql, { name: node, capacity: { gpus: 1 }, gpu_model: null, labels: {} });
    const one = { name: 'one', priority: 0, resources: { gpus: 1 }, default_concurrency: 1 };
    for (const name of names) {
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
    for (const name of names) {
      await putLoadReport(sql, name, 'test', 0, 0, {
        now: Date.now(),
        staleMs: DEFAULT_POLICY_SETTINGS.loadStaleMs,
        maxSources: DEFAULT_POLICY_SETTINGS.loadSourcesMax,
      });
    }
    const [mine, theirs] = await Promise.all(
      names.map((model) => activities.planPass({ model, memory: EMPTY_MEMORY })),
    );
    assert.ok(mine.exists && theirs.exists);
    assert.equal(mine.decision.node, theirs.decision.node, 'both plan on the same best-fitting node');
    const taken = await activities.reserveReplica({ decision: theirs.decision, replicaId: `${names[1]}-1` });
    // One shape (docs/architecture.md): a reservation always names what it reserved.
    assert.ok(taken.reserved, 'the rival reserved');
    assert.deepEqual(taken.decision, theirs.decision, 'the rival reserved what it planned');
    return { activities, mine: mine.decision };
  };

  it('a refusal answers with what the model would do under the lock: nothing, and why not', async () => {
    const { activities, mine } = await rivals(['m', 'rival'], ['gpu-1']);
    const refused = await activities.reserveReplica({ decision: mine, replicaId: 'm-1' });
    assert.ok(!refused.reserved, 'the rival took the only room');
    assert.equal(refused.why, 'node gpu-1 no longer has room for one');
    assert.equal(refused.decision.action, 'none');
    assert.deepEqual(refused.decision.pending, [{ code: 'no_room', profile: 'one', needs: { gpus: 1 } }]);
  });

  it('a decision whose node was taken first is placed on another that has room, under the lock', async () => {
    const { activities, mine } = await rivals(['p', 'q'], ['gpu-2', 'gpu-3']);
    const reserved = await activities.reserveReplica({ decision: mine, replicaId: 'p-1' });
    assert.ok(reserved.reserved && reserved.decision, 'reserved, as planned again');
    assert.notEqual(reserved.decision.node, mine.node);
    const [row] = await sql<
      { node: string; state: string }[]
    >`select node, state from replicas where id = 'p-1'`;
    assert.deepEqual(row, { node: reserved.decision.node, state: 'pending' });
  });
});
