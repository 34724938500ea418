// A burst of places is checked under the reservation lock on the worker's earlier reading of the live
// state, brought up to date (store/snapshot.ts snapshotOnReading): what was reserved since, and the
// models again once any changed. Each test makes the reading stale in one way and checks that the
// reservation still keeps the limit or the node.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { RESERVING_ACTIONS } from '../../src/domain/decision.ts';
import type { Profile } from '../../src/domain/model.ts';
import { DEFAULT_POLICY_SETTINGS, EMPTY_MEMORY } from '../../src/domain/snapshot.ts';
import { reserve } from '../../src/placement/reserve.ts';
import { decideBurst } from '../../src/policy/burst.ts';
import { buildView } from '../../src/policy/view.ts';
import type { Sql } from '../../src/store/db.ts';
import { putLoadReport } from '../../src/store/load.ts';
import { putModel, setOwner } from '../../src/store/models.ts';
import { putNode } from '../../src/store/nodes.ts';
import { putQuota } from '../../src/store/quotas.ts';
import { readLiveReading, readSnapshot } from '../../src/store/snapshot.ts';
import { createScope } from '../../src/store/tenancy.ts';
import { stopOwnServices } from '../support/services.ts';
import { freshStore } from '../support/stack.ts';

const SETTINGS = DEFAULT_POLICY_SETTINGS;
const g1: Profile = { name: 'g1', priority: 1, resources: { gpus: 1 }, default_concurrency: 1 };

describe('reservations checked on an earlier reading', () => {
  let sql: Sql;
  before(async () => {
    sql = await freshStore();
    await createScope(sql, 'org', 'acme', 'Acme', null);
    await createScope(sql, 'team', 'a', 'a', 'acme');
    await createScope(sql, 'team', 'b', 'b', 'acme');
    await putQuota(sql, { scope: 'team:a', limit: { gpus: 2 } }, 'test');
  });
  beforeEach(async () => {
    await sql`truncate replicas, decisions, load_reports, nodes`;
    await sql`delete from models`;
    await putNode(sql, { name: 'n1', capacity: { gpus: 2 }, gpu_model: null, labels: {} });
    for (const [name, owner] of [
      ['mine', 'team:a'],
      ['other', 'team:b'],
    ] as const) {
      await putModel(sql, { name, owner, min_replicas: 0, max_replicas: 4, profiles: [g1] });
    }
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    await stopOwnServices();
  });

  /** What `model` would place for `inFlight` requests, planned on the store as it is now. */
  async function plan(model: string, inFlight: number) {
    await putLoadReport(sql, model, 'test', inFlight, 0, {
      now: Date.now(),
      staleMs: SETTINGS.loadStaleMs,
      maxSources: SETTINGS.loadSourcesMax,
    });
    const view = buildView(await readSnapshot(sql, Date.now(), SETTINGS));
    const burst = decideBurst(view, model, EMPTY_MEMORY);
    assert.ok(RESERVING_ACTIONS.includes(burst[0].action), `${model} plans to place: ${burst[0].reason}`);
    return burst;
  }
  const ids = (model: string, n: number) => Array.from({ length: n }, (_, i) => `${model}-${i}`);
  const active = async () =>
    (
      await sql<
        { n: number }[]
      >`select count(*)::int as n from replicas where state not in ('stopped', 'failed')`
    )[0].n;

  it('counts what was reserved since the reading: a node is never overfilled', async () => {
    const [mine, other] = [await plan('mine', 2), await plan('other', 2)];
    const reading = await readLiveReading(sql, Date.now(), SETTINGS);
    assert.ok((await reserve(sql, other, ids('other', 2), SETTINGS, Date.now())).reserved);
    const late = await reserve(sql, mine, ids('mine', 2), SETTINGS, Date.now(), {
      reading,
      measurements: [],
    });
    assert.equal(late.reserved, false, 'n1 is full since the reading');
    assert.equal(await active(), 2);
  });

  it('plans again onto a node that still fits when the planned one was taken since the reading', async () => {
    await putNode(sql, { name: 'n2', capacity: { gpus: 2 }, gpu_model: null, labels: {} });
    const [mine, other] = [await plan('mine', 2), await plan('other', 2)];
    assert.deepEqual(
      [...mine, ...other].map((d) => d.node),
      ['n1', 'n1', 'n1', 'n1'],
      'both planned on the same fullest node',
    );
    const reading = await readLiveReading(sql, Date.now(), SETTINGS);
    assert.ok((await reserve(sql, other, ids('other', 2), SETTINGS, Date.now())).reserved);
    const late = await reserve(sql, mine, ids('mine', 2), SETTINGS, Date.now(), {
      reading,
      measurements: [],
    });
    assert.ok(late.reserved && late.decisions, 'reserved as planned again');
    assert.deepEqual(
      late.decisions.map((d) => d.node),
      ['n2', 'n2'],
    );
    assert.equal(await active(), 4);
  });

  it('plans a refused rising burst again with its spare places: the learned load growth is kept', async () => {
    await putNode(sql, { name: 'n2', capacity: { gpus: 4 }, gpu_model: null, labels: {} });
    const now = Date.now();
    await putLoadReport(sql, 'other', 'test', 2, 0, {
      now,
      staleMs: SETTINGS.loadStaleMs,
      maxSources: SETTINGS.loadSourcesMax,
    });
    // The load was 0 a second ago and is 2 now: a burst outruns the (no) ready replicas.
    const memory = {
      ...EMPTY_MEMORY,
      growth: { lows: [[now - 1000, 0]] as [number, number][], rises: [], settling: {} },
    };
    const planned = decideBurst(buildView(await readSnapshot(sql, now, SETTINGS)), 'other', memory, 4);
    assert.ok(planned.length > 2, `spare places planned: ${planned.map((d) => d.reason).join('; ')}`);
    const reading = await readLiveReading(sql, now, SETTINGS);
    // mine takes the node other planned on, since the reading.
    const taken = planned[0].node!;
    const mine = (await plan('mine', 2)).map((d) => ({ ...d, node: taken }));
    assert.ok((await reserve(sql, mine, ids('mine', 2), SETTINGS, now)).reserved);
    const late = await reserve(sql, planned, ids('other', planned.length), SETTINGS, now, {
      reading,
      measurements: [],
    });
    assert.ok(late.reserved && late.decisions, 'reserved as planned again');
    assert.equal(late.decisions.length, planned.length, 'the spare places are planned again too');
    assert.ok(late.decisions.every((d) => d.node !== taken));
  });

  it('reads the models again once one changed: an owner moved under the limit counts toward it', async () => {
    const mine = await plan('mine', 2);
    assert.ok((await reserve(sql, await plan('other', 2), ids('other', 2), SETTINGS, Date.now())).reserved);
    await putNode(sql, { name: 'n2', capacity: { gpus: 2 }, gpu_model: null, labels: {} });
    const reading = await readLiveReading(sql, Date.now(), SETTINGS);
    // other's two GPUs now count toward team a, whose limit is 2: mine may place nothing.
    await setOwner(sql, 'other', 'team:a');
    const stale = mine.map((decision) => ({ ...decision, node: 'n2' }));
    const late = await reserve(sql, stale, ids('mine', 2), SETTINGS, Date.now(), {
      reading,
      measurements: [],
    });
    assert.equal(late.reserved, false, 'the limit of team a stops it');
    assert.equal(await active(), 2);
  });

  it('reserves a burst the reading allows, the same as a whole read would', async () => {
    const mine = await plan('mine', 2);
    const reading = await readLiveReading(sql, Date.now(), SETTINGS);
    assert.deepEqual(
      await reserve(sql, mine, ids('mine', 2), SETTINGS, Date.now(), { reading, measurements: [] }),
      {
        reserved: true,
      },
    );
    assert.equal(await active(), 2);
  });
  it('a reading keeps the models of the one before while none changed, and reads them after a change', async () => {
    const first = await readLiveReading(sql, Date.now(), SETTINGS);
    const same = await readLiveReading(sql, Date.now(), SETTINGS, first);
    assert.equal(same.state.models, first.state.models, 'no model changed: the models read before are kept');
    await setOwner(sql, 'other', 'team:a');
    const moved = await readLiveReading(sql, Date.now(), SETTINGS, same);
    assert.notEqual(moved.modelsEpoch, same.modelsEpoch);
    assert.equal(moved.state.models.find((m) => m.name === 'other')?.owner, 'team:a', 'the change is read');
    await putModel(sql, { name: 'third', owner: null, min_replicas: 0, max_replicas: 1, profiles: [g1] });
    const added = await readLiveReading(sql, Date.now(), SETTINGS, moved);
    assert.deepEqual(
      added.state.models.map((m) => m.name),
      ['mine', 'other', 'third'],
    );
  });
});
