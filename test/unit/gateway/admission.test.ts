import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { readConfig } from '../../../src/config.ts';
import { Admission } from '../../../src/gateway/admission.ts';
import { Refusal } from '../../../src/gateway/errors.ts';
import type { LoadReporter } from '../../../src/gateway/load-reporter.ts';
import { ReplicaHealth } from '../../../src/gateway/replica-health.ts';
import type { Route, RoutingTable } from '../../../src/gateway/routing-table.ts';

const profile = { name: 'h100', priority: 0, resources: { gpus: 1 } };
const SERVING = {
  name: 'm',
  owner: null,
  deleting: false,
  min_replicas: 0,
  max_replicas: 2,
  profiles: [{ ...profile, engine: { kind: 'sim' as const } }],
};

/** A routing table whose routes the test sets, and whose refreshes it calls. */
function fakeTable() {
  const routes = new Map<string, Partial<Route>>();
  const listeners = new Set<() => void>();
  return {
    routes,
    refreshed: () => {
      for (const listener of listeners) listener();
    },
    table: {
      // A model whose profile has an engine, unless the test's route says otherwise.
      current: (name: string) => {
        const route = routes.get(name);
        return route && { model: SERVING, ...route };
      },
      onRefresh(listener: () => void) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    } as unknown as RoutingTable,
  };
}

function setUp() {
  const { routes, refreshed, table } = fakeTable();
  const waiting = new Map<string, number>();
  const reporter = {
    change: (model: string, _inFlight: number, held: number) =>
      waiting.set(model, (waiting.get(model) ?? 0) + held),
  } as unknown as LoadReporter;
  const admission = new Admission(table, new ReplicaHealth(readConfig({}).gateway), reporter, {
    queueMs: 10_000,
    queueMax: 2,
  });
  return { routes, refreshed, admission, waiting };
}

const upstream = { id: 'r1', endpoint: 'http://127.0.0.1:1/v1' };
const settle = () => new Promise((resolve) => setImmediate(resolve));
const refusalOf = (held: unknown) =>
  Promise.resolve(held).then(
    () => assert.fail('admitted'),
    (error) => error as Refusal,
  );

describe('Admission', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 }));
  afterEach(() => mock.timers.reset());

  it('admits at once to a ready replica, with no promise, holding nothing', async () => {
    const { routes, admission, waiting } = setUp();
    routes.set('m', { replicas: [upstream] });
    assert.deepEqual(
      admission.replicasOf('m', () => new AbortController().signal),
      [upstream],
    );
    assert.equal(waiting.get('m') ?? 0, 0);
  });

  it('holds a request, counted as waiting, until a refresh shows a ready replica', async () => {
    const { routes, refreshed, admission, waiting } = setUp();
    routes.set('m', { replicas: [] });
    const admitted = admission.replicasOf('m', () => new AbortController().signal);
    await settle();
    assert.equal(waiting.get('m'), 1);
    mock.timers.tick(3000);
    assert.deepEqual(admission.oldestHeldSeconds(), new Map([['m', 3]]));
    refreshed();
    assert.equal(waiting.get('m'), 1, 'still none ready');
    routes.set('m', { replicas: [upstream] });
    refreshed();
    assert.deepEqual(await admitted, [upstream]);
    assert.equal(waiting.get('m'), 0);
    assert.deepEqual(admission.heldCounts(), new Map());
  });

  it('answers 503 at once, naming the cause, for a model none of whose profiles has an engine', async () => {
    const { routes, admission, waiting } = setUp();
    routes.set('m', { replicas: [], model: { ...SERVING, profiles: [profile, { ...profile, name: 'l4' }] } });
    const refusal = await refusalOf(admission.replicasOf('m', () => new AbortController().signal));
    assert.equal(refusal.kind, 'not_servable');
    assert.equal(
      refusal.message,
      'model m cannot serve requests: none of its profiles (h100, l4) has a runtime or an engine, so its replicas have no endpoint; give a profile a runtime (docs/api.md#models)',
    );
    assert.equal(waiting.get('m') ?? 0, 0, 'nothing held');
  });

  it('answers 503 with Retry-After once the wait is over, and 429 past the queue', async () => {
    const { routes, admission, waiting } = setUp();
    routes.set('m', { replicas: [] });
    const held = [1, 2].map(() => refusalOf(admission.replicasOf('m', () => new AbortController().signal)));
    const full = await refusalOf(admission.replicasOf('m', () => new AbortController().signal));
    assert.equal(full.kind, 'queue_full');
    assert.equal(full.retryAfterS, 5);
    mock.timers.tick(10_000);
    for (const refusal of await Promise.all(held)) {
      assert.equal(refusal.kind, 'no_replica');
      assert.equal(refusal.retryAfterS, 5);
      assert.match(refusal.message, /model m has no ready replica after 10 s \(LLMGW_GATEWAY_QUEUE_S\)/);
    }
    assert.equal(waiting.get('m'), 0);
  });

  it('lets go of a request whose client left, and of one whose model was deleted', async () => {
    const { routes, refreshed, admission, waiting } = setUp();
    routes.set('m', { replicas: [] });
    const client = new AbortController();
    const left = Promise.resolve(admission.replicasOf('m', () => client.signal)).catch((error) => error);
    const deleted = refusalOf(admission.replicasOf('m', () => new AbortController().signal));
    await settle();
    client.abort(new Error('client left'));
    assert.equal(((await left) as Error).message, 'client left');
    routes.delete('m');
    refreshed();
    assert.equal((await deleted).kind, 'unknown_model');
    assert.equal(waiting.get('m'), 0);
    assert.ok((await deleted) instanceof Refusal);
  });
});
