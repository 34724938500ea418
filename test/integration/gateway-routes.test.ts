// The gateway's routing table kept fresh by the store's notifications (migration 024_routes_notify.sql),
// not a blind timer: a replica made ready is routed to within 500 ms with the safety read a minute
// away; a write whose notification is lost is read by the safety read, or at once when the listening
// connection is made again; a replica's Upstream stays the same object while it is unchanged.
import assert from 'node:assert/strict';
import { type AddressInfo, createServer, type Socket, connect as tcpConnect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_POLICY_SETTINGS } from '../../src/domain/snapshot.ts';
import { RoutingTable, type Upstream } from '../../src/gateway/routing-table.ts';
import { connect } from '../../src/store/db.ts';
import { gpuNode, gpuProfile, ok } from '../support/cluster.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

const quiet = { warn() {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A table of its own on the test's store, read again without a notification every `safetyReadMs`. */
async function table(stack: Stack, safetyReadMs: number): Promise<RoutingTable> {
  const routes = new RoutingTable(stack.sql, quiet, Date.now, DEFAULT_POLICY_SETTINGS, 1, safetyReadMs);
  await routes.start();
  return routes;
}

const routed = (routes: RoutingTable, model: string): string[] =>
  (routes.current(model)?.replicas ?? []).map((r) => r.id);

/** How long until `check` holds (checked every 5 ms), or undefined past `withinMs`. */
async function msUntil(check: () => boolean, withinMs: number): Promise<number | undefined> {
  const start = performance.now();
  while (performance.now() - start < withinMs) {
    if (check()) return performance.now() - start;
    await sleep(5);
  }
  return undefined;
}

/** A TCP relay to the store that can go down (connections cut, new ones refused) and come up again. */
async function relayTo(store: URL) {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = tcpConnect(Number(store.port || 5432), store.hostname);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(a);
      a.pipe(b);
      a.on('close', () => b.destroy()).on('error', () => {});
    }
  });
  const listen = (port: number) =>
    new Promise<number>((resolve) =>
      server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
    );
  const port = await listen(0);
  const url = new URL(store);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    down: () => {
      server.close();
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    up: () => listen(port),
  };
}

describe('the routing table, kept fresh by the store', () => {
  let stack: Stack;
  const tables: RoutingTable[] = [];
  const fresh = async (safetyReadMs: number) => {
    const routes = await table(stack, safetyReadMs);
    tables.push(routes);
    return routes;
  };
  let replicas = 0;
  /** A replica of `model` in `state`, written with no notification when `silently` (as if one were lost). */
  const addReplica = async (model: string, state: string, options: { silently?: boolean } = {}) => {
    const id = `${model}-${++replicas}`;
    await stack.sql.begin(async (tx) => {
      if (options.silently) await tx`alter table replicas disable trigger routes_changed`;
      await tx`
        insert into replicas (id, model, profile, node, resources, state, created_at, endpoint)
        values (${id}, ${model}, 'h100', 'gpu-1', ${tx.json({ gpus: 1, cores: 4, memory_gib: 32 })},
          ${state}, now(), ${`http://127.0.0.1:9/${id}/v1`})`;
      if (options.silently) await tx`alter table replicas enable trigger routes_changed`;
    });
    return id;
  };

  /** Ends the store's connection that listens (postgres.js makes it again): how many it ended. */
  const terminateListening = async () => {
    const [{ count }] = await stack.sql<{ count: number }[]>`
      select count(pg_terminate_backend(pid))::int as count from pg_stat_activity
      where datname = current_database() and query ilike 'listen %'`;
    return count;
  };
  const listening = async () => {
    const [{ count }] = await stack.sql<{ count: number }[]>`
      select count(*)::int as count from pg_stat_activity
      where datname = current_database() and query ilike 'listen %'`;
    return count;
  };

  before(async () => {
    stack = await startStack({ nodes: [gpuNode('gpu-1', 8)] });
    for (const model of ['chat', 'code', 'lost', 'again', 'relisten', 'same']) {
      await ok(stack, 'PUT', `/api/v1/models/${model}`, {
        min_replicas: 0,
        max_replicas: 3,
        profiles: [gpuProfile('h100', 1, { default_concurrency: 8 })],
      });
    }
  });
  after(async () => {
    for (const routes of tables) routes.stop();
    await stack?.stop();
  });

  it('routes to a replica made ready within 500 ms, and stops when it drains, with the safety read a minute away', async () => {
    const routes = await fresh(60_000);
    const id = await addReplica('chat', 'starting');
    await sleep(100);
    assert.deepEqual(routed(routes, 'chat'), [], 'a starting replica gets no requests');
    await stack.sql`update replicas set state = 'ready' where id = ${id}`;
    const ready = await msUntil(() => routed(routes, 'chat').includes(id), 2000);
    assert.ok(
      ready !== undefined && ready < 500,
      `routed to ${ready?.toFixed(0) ?? 'never'} ms after it was ready`,
    );
    await stack.sql`update replicas set state = 'draining' where id = ${id}`;
    const drained = await msUntil(() => !routed(routes, 'chat').includes(id), 2000);
    assert.ok(
      drained !== undefined && drained < 500,
      `still routed to ${drained?.toFixed(0) ?? '2000+'} ms after it drained`,
    );
  });

  it('a new model and a measurement that changes the slots are read within 500 ms', async () => {
    const routes = await fresh(60_000);
    await addReplica('code', 'ready');
    const added = await msUntil(() => routed(routes, 'code').length === 1, 2000);
    assert.ok(
      added !== undefined && added < 500,
      `the replica read after ${added?.toFixed(0) ?? '2000+'} ms`,
    );
    assert.equal(routes.current('code')?.replicas[0]?.slots, 8);
    await stack.sql`
      insert into measurements (model, profile, max_concurrency_at_slo, throughput_tok_per_sec, slo, measured_at)
      values ('code', 'h100', 3, 100, ${stack.sql.json({ ttft_p95_ms: 500 })}, now())`;
    const read = await msUntil(() => routes.current('code')?.replicas[0]?.slots === 3, 2000);
    assert.ok(
      read !== undefined && read < 500,
      `the measured slots read after ${read?.toFixed(0) ?? '2000+'} ms`,
    );
  });

  it('a write whose notification was lost is read by the safety read', async () => {
    const slow = await fresh(60_000);
    const safe = await fresh(300);
    const id = await addReplica('lost', 'ready', { silently: true });
    assert.ok((await msUntil(() => routed(safe, 'lost').includes(id), 2000)) !== undefined, 'never read');
    // The table without a safety read soon has not read it: the write was not notified indeed.
    assert.deepEqual(routed(slow, 'lost'), []);
  });

  it('reads the table at once when its listening connection is made again, and hears notifications after', async () => {
    const routes = await fresh(60_000);
    const missed = await addReplica('again', 'ready', { silently: true });
    await sleep(100);
    assert.deepEqual(routed(routes, 'again'), []);
    assert.equal(await terminateListening(), 1, 'the one listening connection of this store');
    assert.ok(
      (await msUntil(() => routed(routes, 'again').includes(missed), 5000)) !== undefined,
      'never read',
    );
    const next = await addReplica('again', 'ready');
    const read = await msUntil(() => routed(routes, 'again').includes(next), 2000);
    assert.ok(
      read !== undefined && read < 500,
      `a notification after it read in ${read?.toFixed(0) ?? '2000+'} ms`,
    );
  });

  it('listens again after the store was down, at the next safety read if postgres.js gave up', async () => {
    const relay = await relayTo(new URL(stack.databaseUrl));
    const through = connect(relay.url, { max: 2 });
    const routes = new RoutingTable(through, quiet, Date.now, DEFAULT_POLICY_SETTINGS, 1, 1000);
    // The tables of the other tests listen on a connection of their own.
    const others = await listening();
    try {
      await routes.start();
      assert.equal(await listening(), others + 1);
      relay.down();
      // Down past a safety read: postgres.js's own try to listen again is refused, and so is the read's.
      await sleep(1500);
      assert.equal(await listening(), others, 'no connection listens while the store is down');
      await relay.up();
      await eventually('listening again', async () => (await listening()) === others + 1, 5000);
      // A read begun as the store came back may hang on a connection made then; the next safety read
      // leaves it behind. What is asked here is the notification once reads go through again.
      await eventually(
        'a read through the store again',
        () => Promise.race([routes.refresh().then(() => true), sleep(300).then(() => false)]),
        5000,
      );
      const id = await addReplica('relisten', 'ready');
      const read = await msUntil(() => routed(routes, 'relisten').includes(id), 2000);
      assert.ok(
        read !== undefined && read < 500,
        `a notification after it read in ${read?.toFixed(0) ?? '2000+'} ms`,
      );
    } finally {
      routes.stop();
      await through.end({ timeout: 1 });
      relay.down();
    }
  });

  it("keeps a replica's Upstream object across reads while its endpoint and slots stay the same", async () => {
    const routes = await fresh(60_000);
    const id = await addReplica('same', 'ready');
    await eventually('the replica read', async () => routed(routes, 'same').includes(id));
    const first = routes.current('same')!.replicas[0] as Upstream;
    await routes.refresh();
    assert.equal(routes.current('same')!.replicas[0], first, 'a read that changed nothing kept it');
    await stack.sql`update replicas set endpoint = 'http://127.0.0.1:9/moved/v1' where id = ${id}`;
    await eventually('the new endpoint read', async () =>
      routes.current('same')!.replicas[0]?.endpoint.includes('moved'),
    );
    assert.notEqual(routes.current('same')!.replicas[0], first, 'a moved replica is a new Upstream');
  });
});
