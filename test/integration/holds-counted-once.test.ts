// Model-based test of issue 37: preemptions and reclaims under one limited org, with the real activities
// on a real Postgres in any order (the machinery of test/support/reservation-model.ts). A replica they
// reserve waits beside its draining victims; the room they share must be counted once. After every
// command, no scope holds more than its limit (no limit is lowered here), and GET /api/v1/quotas shows
// what the policy decides on: the same holds and borrowed for every quota.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createApp } from '../../src/api/app.ts';
import { storeBootstrapAdmin } from '../../src/auth/bootstrap.ts';
import { newSecret } from '../../src/contracts/secrets.ts';
import { borrowedByScope } from '../../src/policy/guarantee.ts';
import { holdsOf } from '../../src/policy/holdings.ts';
import { complete, fitsWithin } from '../../src/policy/resources.ts';
import type { Sql } from '../../src/store/db.ts';
import {
  buildWorld,
  checkInvariants,
  checkWithinBudget,
  commandsFor,
  commit,
  initialLoads,
  plan,
  profile,
  type Real,
  reportLoad,
  SETTINGS,
  startReserved,
  startRun,
} from '../support/reservation-model.ts';
import { stopOwnServices } from '../support/services.ts';
import { freshStore, idleReconcilers } from '../support/stack.ts';

const RUNS = Number(process.env.LLMGW_COUNTED_ONCE_RUNS ?? 100);
/** LLMGW_COUNTED_ONCE_REPLAY='{"seed":..,"path":".."}' replays a counterexample fast-check printed. */
const replay = JSON.parse(process.env.LLMGW_COUNTED_ONCE_REPLAY ?? '{}');

/**
 * Org acme, limited to 5 GPUs over three teams on 6 GPUs of nodes, beside a model of no owner (free)
 * that takes room outside the limit: ml within a guarantee of 2 reclaims what the others borrow; web's
 * floor (min_replicas 1) preempts surplus of eval and of web's own code.
 */
const MODELS = [
  { name: 'chat', team: 'ml', profile: profile(1) },
  { name: 'web', team: 'web', profile: profile(1), min_replicas: 1 },
  { name: 'code', team: 'web', profile: profile(2) },
  { name: 'evalm', team: 'eval', profile: profile(1) },
  { name: 'evalb', team: 'eval', profile: profile(2) },
  { name: 'free', team: null, profile: profile(1) },
] as const;
const NAMES = MODELS.map((m) => m.name);
const WORLD = {
  org: { id: 'acme', quota: { limit: { gpus: 5 } } },
  teams: { ml: { guarantee: { gpus: 2 } }, web: undefined, eval: { limit: { gpus: 4 } } },
  nodes: [
    ['g1', 4],
    ['g2', 2],
  ] as [string, number][],
  models: MODELS,
};

interface QuotaShown {
  scope: string;
  holds: Record<string, number>;
  borrowed: Record<string, number>;
}

describe('a preemption or reclaim under a limit counts its room once (model-based, issue 37)', () => {
  let sql: Sql;
  let real: Real;
  let quotasShown: () => Promise<QuotaShown[]>;

  before(async () => {
    sql = await freshStore();
    real = await buildWorld(sql, WORLD);
    // The API in process, as it answers GET /api/v1/quotas: its own reading of the store.
    const admin = newSecret();
    await storeBootstrapAdmin(sql, admin);
    const app = createApp({
      sql,
      reconcilers: idleReconcilers,
      temporalReachable: async () => true,
      policy: SETTINGS,
    });
    quotasShown = async () => {
      const answer = await app.request('/api/v1/quotas', { headers: { authorization: `Bearer ${admin}` } });
      assert.equal(answer.status, 200);
      return (await answer.json()) as QuotaShown[];
    };
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    await stopOwnServices();
  });

  /** The invariants of every reservation-path test, then holds within limits and the API's figures the policy's. */
  async function check(real: Real, label: string) {
    const view = await checkInvariants(real.sql, label);
    const shown = await quotasShown();
    for (const [scope, quota] of view.quotas) {
      const holds = holdsOf(view, scope);
      if (quota.limit) {
        assert.ok(
          fitsWithin(holds, quota.limit),
          `${label}: ${scope} holds ${JSON.stringify(holds)}, past its limit ${JSON.stringify(quota.limit)}: ` +
            JSON.stringify(view.active.map((r) => [r.id, r.state, r.resources.gpus, r.reclaimed_for])),
        );
      }
      const api = shown.find((q) => q.scope === scope);
      assert.deepEqual(api?.holds, complete(holds), `${label}: the API's holds of ${scope} are the policy's`);
      assert.deepEqual(
        api?.borrowed,
        complete(borrowedByScope(view).get(scope)!),
        `${label}: the API's borrowed of ${scope} is the policy's`,
      );
    }
    if (view.active.some((r) => r.state === 'pending' && view.active.some((v) => v.reclaimed_for === r.id)))
      real.seen['a reservation beside its victims'] =
        (real.seen['a reservation beside its victims'] ?? 0) + 1;
  }

  // The first poll, in small: web's floor preempts a surplus replica of evalm under the org's
  // limit and waits beside it. Counted twice, org acme read 6 GPUs of its 5.
  it("web's floor preempts under the full org, waits beside its victim, and the org reads 5 of 5", async () => {
    await startRun(real, { chat: 1, web: 0, code: 1, evalm: 4, evalb: 0, free: 0 });
    const pass = async (m: string) => {
      await plan(real, m);
      await startReserved(real, m);
      await commit(real, m);
    };
    // web asks for its floor only once evalm has placed: waiting from the start, it would have had
    // evalm's second replica yield to it (fairness.ts), and nothing would be preempted.
    await sql`update models set min_replicas = 0 where name = 'web'`;
    await pass('chat');
    await pass('code');
    await pass('evalm');
    await real.sql`update replicas set state = 'ready'`;
    await sql`update models set min_replicas = 1 where name = 'web'`;
    await reportLoad(sql, 'evalm', 1); // evalm's second replica is now surplus
    await pass('web'); // web (floor 1 of 1) takes it
    const waiting = await sql<
      { id: string }[]
    >`select id from replicas where model = 'web' and state = 'pending'`;
    assert.equal(waiting.length, 1, 'web waits for the replica it preempted');
    const [victim] = await sql<{ reclaimed_for: string }[]>`
      select reclaimed_for from replicas where state = 'draining'`;
    assert.equal(victim.reclaimed_for, waiting[0].id, 'the victim keeps the reservation it drains for');
    await check(real, 'web waits beside its victim');
    // No sibling is cut for the phantom: evalm's decision plans no removal, and web's own replica starts
    // once its victim has stopped.
    await plan(real, 'evalm');
    assert.notEqual(real.plans.get('evalm')?.decision.action, 'remove');
    await real.sql`update replicas set state = 'stopped' where state = 'draining'`;
    await plan(real, 'web');
    await startReserved(real, 'web');
    const [web] = await sql<{ state: string }[]>`select state from replicas where model = 'web'`;
    assert.equal(web.state, 'starting', 'the model that preempted gets its replica');
    await check(real, 'web started');
  });

  // Up to RUNS runs within 200 s: the file's 300 s timeout holds on a loaded machine (checkWithinBudget).
  it(`no scope holds more than its limit, and the API shows the policy's holds (up to ${RUNS} runs)`, async (t) => {
    await checkWithinBudget(
      fc.asyncProperty(
        initialLoads(NAMES),
        fc.commands(commandsFor(NAMES, check), { size: 'medium' }),
        async (initial, cmds) => {
          await startRun(real, initial);
          await fc.asyncModelRun(() => ({ model: {}, real }), cmds);
        },
      ),
      { numRuns: RUNS, budgetMs: 200_000, minRuns: 30, replay },
      (message) => t.diagnostic(message),
    );
    for (const what of ['place', 'reclaim', 'preempt', 'start', 'a reservation beside its victims']) {
      assert.ok((real.seen[what] ?? 0) > 0, `some runs reach "${what}": ${JSON.stringify(real.seen)}`);
    }
  });
});
