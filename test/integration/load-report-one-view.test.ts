// A load report's path builds the view of the store once (docs/architecture.md "A load report's path"):
// the load signals weigh it on the model's own rows, the pass it wakes builds the view, and the
// reservation checks the burst on that view when nothing it holds changed since. The view builder is
// injected and counted.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createActivities } from '../../src/activities/index.ts';
import { PolicyCache } from '../../src/activities/policy-cache.ts';
import { SimCluster } from '../../src/cluster/sim/sim-cluster.ts';
import { DEFAULT_POLICY_SETTINGS, EMPTY_MEMORY } from '../../src/domain/snapshot.ts';
import { buildView } from '../../src/policy/view.ts';
import { LoadSignals } from '../../src/reconcilers/load-signals.ts';
import type { Sql } from '../../src/store/db.ts';
import { getModel, putModel } from '../../src/store/models.ts';
import { putNode } from '../../src/store/nodes.ts';
import { readQuotaPolicy } from '../../src/store/snapshot.ts';
import { stopOwnServices } from '../support/services.ts';
import { freshStore, idleReconcilers } from '../support/stack.ts';

const SETTINGS = DEFAULT_POLICY_SETTINGS;
const one = { name: 'one', priority: 0, resources: { gpus: 1 }, default_concurrency: 1 };

describe("a load report's path", () => {
  let sql: Sql;
  before(async () => {
    sql = await freshStore();
  });
  beforeEach(async () => {
    await sql`truncate replicas, decisions, load_reports, nodes`;
    await sql`delete from models`;
    await putNode(sql, { name: 'n1', capacity: { gpus: 8 }, gpu_model: null, labels: {} });
    for (const name of ['chat', 'rival'])
      await putModel(sql, { name, owner: null, min_replicas: 0, max_replicas: 4, profiles: [one] });
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    await stopOwnServices();
  });

  /** The activities of a worker whose views are counted, and the load signals of the API. */
  function parts() {
    const built: number[] = [];
    const activities = createActivities({
      sql,
      driver: new SimCluster(sql, idleReconcilers, { startDelayMs: 1e10, drainGraceMs: 1e10 }, { warn() {} }),
      policyCache: new PolicyCache(() => readQuotaPolicy(sql), 3_600_000),
      config: { policy: SETTINGS, resyncMs: 1000 },
      buildView: (snapshot) => {
        built.push(snapshot.now);
        return buildView(snapshot);
      },
    });
    const told: string[] = [];
    const signals = new LoadSignals(
      sql,
      { ...idleReconcilers, tell: async (models) => void told.push(...models) },
      SETTINGS,
    );
    return { activities, signals, built, told };
  }

  /** Reports `inFlight` for `model`, then runs the pass it wakes up to its reservation. */
  async function reportAndPass(
    p: ReturnType<typeof parts>,
    model: string,
    inFlight: number,
    between?: () => Promise<void>,
  ) {
    const receipt = await p.signals.report((await getModel(sql, model))!, 'gateway:test', inFlight, 0);
    assert.ok(receipt.signalled, 'the report wakes the reconciler');
    const plan = await p.activities.planPass({ model, memory: EMPTY_MEMORY });
    assert.ok(plan.exists && plan.decision.action === 'place', 'the pass places');
    await between?.();
    const also = plan.alsoPlace.map((decision, i) => ({ decision, replicaId: `${model}-also-${i}` }));
    return p.activities.reserveReplica({ decision: plan.decision, replicaId: `${model}-first`, also });
  }

  it('builds the view once: in the pass, reused by the reservation', async () => {
    const p = parts();
    const reservation = await reportAndPass(p, 'chat', 3);
    assert.ok(reservation.reserved);
    assert.equal(p.built.length, 1, 'one view for the report, its pass and its reservation');
    assert.deepEqual(p.told, ['chat']);
    const rows = await sql`select id from replicas where model = 'chat' order by id`;
    assert.equal(rows.length, 3, 'the burst of three is reserved');
  });

  it('builds it again under the lock when a replica was reserved since the pass read the store', async () => {
    const p = parts();
    const rival = parts();
    const reservation = await reportAndPass(p, 'chat', 2, async () => {
      assert.ok((await reportAndPass(rival, 'rival', 1)).reserved);
    });
    assert.ok(reservation.reserved);
    assert.equal(p.built.length, 2, 'the view of the pass, and one with the rival reserved');
  });
});
