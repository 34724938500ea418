// Issue 19, item 6: load sources are bounded. A model takes reports from at most LLMGW_LOAD_SOURCES_MAX
// fresh sources (past that, 429 and nothing stored), a report deletes its model's expired reports, and
// the sum over sources is capped like a single report. A report may say since when its requests wait
// (waiting_since): the load read back carries the earliest, when every source that waits said.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_REPORTED_REQUESTS } from '../../src/domain/model.ts';
import { newId } from '../../src/store/ids.ts';
import { readLoad, refreshLoadReports } from '../../src/store/load.ts';
import { assertError } from '../support/assertions.ts';
import { ok, untilRouted } from '../support/cluster.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

describe('load sources', () => {
  let stack: Stack;
  // Model names reach Temporal workflow IDs, shared by every stack of the run: keep them unique.
  const tag = newId().slice(0, 6);
  const report = (model: string, source: string, in_flight = 1, waiting = 0) =>
    stack.call('POST', `/api/v1/models/${model}/load`, { in_flight, waiting, source });
  const sources = async (model: string) =>
    (
      await stack.sql<{ source: string }[]>`
        select source from load_reports where model = ${model} order by source`
    ).map((row) => row.source);
  /** Makes these sources' reports older than the staleness bound (60 s). */
  const silence = (model: string, ...silent: string[]) =>
    stack.sql`update load_reports set reported_at = now() - interval '2 minutes'
      where model = ${model} and source in ${stack.sql(silent)}`;
  const model = async (name: string) => {
    await ok(stack, 'PUT', `/api/v1/models/${name}`, {
      max_replicas: 1,
      profiles: [{ name: 'cpu', resources: { cores: 1 } }],
    });
    return name;
  };

  before(async () => {
    stack = await startStack({ env: { LLMGW_LOAD_SOURCES_MAX: '3', LLMGW_LOAD_STALE_S: '60' } });
  });
  after(() => stack.stop());

  it('a new source past the bound is refused with 429 and nothing is stored; a known one still reports', async () => {
    const name = await model(`capped-${tag}`);
    for (const source of ['a', 'b', 'c']) assert.equal((await report(name, source)).status, 202);
    const refused = await report(name, 'd', 5);
    assertError(
      refused,
      429,
      `model ${name} already has 3 load sources reporting and takes at most 3 (LLMGW_LOAD_SOURCES_MAX); report as one of them, or wait until one has been silent for 60 s`,
    );
    assert.deepEqual(await sources(name), ['a', 'b', 'c'], 'nothing stored');
    const again = await report(name, 'a', 4);
    assert.equal(again.status, 202);
    assert.equal(again.body.in_flight, 6, 'a (4) + b (1) + c (1); d never counted');

    // A source silent for longer than the staleness bound frees its place, and its report goes.
    await silence(name, 'b');
    assert.equal((await report(name, 'd')).status, 202);
    assert.deepEqual(await sources(name), ['a', 'c', 'd']);
  });

  it('a report deletes its model’s expired reports, and only its model’s', async () => {
    const name = await model(`expiring-${tag}`);
    const other = await model(`other-${tag}`);
    for (const source of ['gw-1', 'gw-2', 'gw-3']) assert.equal((await report(name, source)).status, 202);
    assert.equal((await report(other, 'gw-1')).status, 202);
    await silence(name, 'gw-1', 'gw-2');
    await silence(other, 'gw-1');

    assert.equal((await report(name, 'gw-3')).status, 202);
    assert.deepEqual(await sources(name), ['gw-3']);
    assert.deepEqual(await sources(other), ['gw-1'], 'the other model keeps its newest report');
  });

  it('the sum over sources is capped like one report', async () => {
    const name = await model(`summed-${tag}`);
    const max = MAX_REPORTED_REQUESTS;
    for (const source of ['a', 'b', 'c']) assert.equal((await report(name, source, max, max)).status, 202);
    const receipt = await report(name, 'a', max, max);
    // L = in_flight + waiting: each sum stops at the most one report may give.
    assert.equal(receipt.body.in_flight, 2 * max);
    const listed = await ok(stack, 'GET', `/api/v1/models/${name}`);
    assert.equal(listed.in_flight, 2 * max);
  });

  it('gateways add up; gateways and replicas count the same requests once: the larger of the two sums', async () => {
    const name = await model(`counted-${tag}`);
    const inFlight = async () => (await ok(stack, 'GET', `/api/v1/models/${name}`)).in_flight;
    // This stack takes 3 sources a model.
    await report(name, 'replica:r1', 7);
    assert.equal(await inFlight(), 7, 'the replica alone');
    await report(name, 'gateway:g1', 5, 1);
    assert.equal(await inFlight(), 7, 'the gateway saw 6 of the 7 the replicas serve: not 13');
    await report(name, 'gateway:g2', 2, 1);
    assert.equal(await inFlight(), 9, 'two gateways (6 + 3) see more than the replicas (7): held requests');
    await silence(name, 'replica:r1');
    assert.equal((await report(name, 'gateway:g2', 1)).body.in_flight, 7, 'the gateways alone (6 + 1)');
  });

  describe('waiting_since', () => {
    const since = async (name: string) => (await readLoad(stack.sql, Date.now(), 60_000, name))[name];
    const stored = async (name: string) =>
      Object.fromEntries(
        (
          await stack.sql<{ source: string; waiting_since: Date | null }[]>`
            select source, waiting_since from load_reports where model = ${name}`
        ).map((row) => [row.source, row.waiting_since?.getTime() ?? null]),
      );
    const waits = (name: string, source: string, waiting: number, waiting_since?: number) =>
      stack.call('POST', `/api/v1/models/${name}/load`, { in_flight: 1, waiting, source, waiting_since });

    it("a gateway's report says since when its requests wait; two waiting gateways give the earliest", async () => {
      const name = await model(`since-${tag}`);
      const t = Date.now() - 60_000;
      assert.equal((await waits(name, 'gateway:g1', 2, t + 1000)).status, 202);
      let load = await since(name);
      assert.equal(load.waiting, 2);
      assert.equal(load.waiting_since, t + 1000);
      assert.deepEqual(await stored(name), { 'gateway:g1': t + 1000 });

      assert.equal((await waits(name, 'gateway:g2', 1, t)).status, 202);
      load = await since(name);
      assert.equal(load.waiting, 3);
      assert.equal(load.waiting_since, t, 'the earlier of the two');
      assert.equal((await waits(name, 'gateway:g2', 1, t + 2000)).status, 202);
      assert.equal((await since(name)).waiting_since, t + 1000, "g2's queue began again, after g1's");

      // Marking the reports fresh changes no time.
      await refreshLoadReports(stack.sql, 'gateway:g1');
      assert.deepEqual(await stored(name), { 'gateway:g1': t + 1000, 'gateway:g2': t + 2000 });
      assert.equal((await since(name)).waiting_since, t + 1000);
    });

    it('unknown when a waiting source does not say since when, and none when nothing waits', async () => {
      const name = await model(`since-unknown-${tag}`);
      const t = Date.now() - 60_000;
      await waits(name, 'gateway:g1', 2, t);
      assert.equal((await waits(name, 'gateway:g2', 1)).status, 202);
      let load = await since(name);
      assert.equal(load.waiting, 3);
      assert.equal(load.waiting_since, undefined, 'g2 waits since it does not say when');
      assert.ok(!('waiting_since' in load));

      // A source whose requests no longer wait counts for none of it.
      assert.equal((await waits(name, 'gateway:g2', 0)).status, 202);
      assert.equal((await since(name)).waiting_since, t);
      // Nothing waits: no time, and none stored.
      assert.equal((await waits(name, 'gateway:g1', 0)).status, 202);
      load = await since(name);
      assert.equal(load.waiting, 0);
      assert.ok(!('waiting_since' in load));
      assert.deepEqual(await stored(name), { 'gateway:g1': null, 'gateway:g2': null });
    });

    it("the load the larger sum gives carries that sum's time: the replicas' sum, when larger, says none", async () => {
      const name = await model(`since-larger-${tag}`);
      const t = Date.now() - 60_000;
      await waits(name, 'gateway:g1', 2, t);
      assert.equal((await since(name)).waiting_since, t);
      await stack.call('POST', `/api/v1/models/${name}/load`, {
        in_flight: 9,
        waiting: 1,
        source: 'replica:r1',
      });
      const load = await since(name);
      assert.equal(load.in_flight + load.waiting, 10, "the replicas' sum (10) over the gateway's (3)");
      assert.ok(!('waiting_since' in load), 'the replica did not say since when its request waits');
    });

    it('a bad waiting_since is refused (400) with a sentence, and changes nothing', async () => {
      const name = await model(`since-bad-${tag}`);
      const t = Date.now() - 60_000;
      await waits(name, 'gateway:g1', 2, t);
      const before = await stack.sql`select * from load_reports where model = ${name}`;
      const refused: [unknown, number, string][] = [
        [-1, 2, 'waiting_since must be at least 0 (milliseconds since the epoch)'],
        [t + 0.5, 2, 'waiting_since must be a whole number of milliseconds since the epoch'],
        [new Date(t).toISOString(), 2, 'waiting_since must be a number: milliseconds since the epoch'],
        [1e300, 2, 'waiting_since must be a whole number of milliseconds since the epoch'],
        [9e15, 2, 'waiting_since must be at most 8640000000000000 (milliseconds since the epoch)'],
        [t, 0, 'waiting_since is only for requests waiting: leave it out when waiting is 0'],
      ];
      for (const [waiting_since, waiting, message] of refused) {
        const answer = await stack.call('POST', `/api/v1/models/${name}/load`, {
          in_flight: 5,
          waiting,
          source: 'gateway:g1',
          waiting_since,
        });
        assertError(answer, 400, message);
      }
      assert.deepEqual(await stack.sql`select * from load_reports where model = ${name}`, before);
      assert.equal((await since(name)).waiting_since, t);
    });
  });
});

describe("a gateway's load reports", () => {
  let stack: Stack;
  let key: string;
  const name = `held-${newId().slice(0, 6)}`;
  const report = async () => {
    const [row] = await stack.sql<{ waiting: number; waiting_since: Date | null }[]>`
      select waiting, waiting_since from load_reports where model = ${name} and source like 'gateway:%'`;
    return row;
  };

  before(async () => {
    // No node: the model's requests are held, waiting for a replica that never comes.
    stack = await startStack({ gateway: true });
    await ok(stack, 'PUT', `/api/v1/models/${name}`, {
      max_replicas: 1,
      profiles: [
        { name: 'gpu', resources: { gpus: 1 }, engine: { kind: 'llama.cpp', model: '/models/chat.gguf' } },
      ],
    });
    key = await stack.token({ name: 'app', role: 'admin' });
    await untilRouted(stack, key, name, 0);
  });
  after(() => stack?.stop());

  it('say since when its requests are held, and nothing once none are', async () => {
    const start = Date.now();
    const leaving = new AbortController();
    const held = fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: name, messages: [{ role: 'user', content: 'hi' }] }),
      signal: leaving.signal,
    }).catch(() => undefined);
    const waiting = await eventually('the held request reported', async () => {
      const row = await report();
      return row?.waiting === 1 ? row : undefined;
    });
    const since = waiting.waiting_since?.getTime();
    assert.ok(since !== undefined && since >= start && since <= Date.now(), `${since} since ${start}`);
    assert.equal((await readLoad(stack.sql, Date.now(), 60_000, name))[name].waiting_since, since);

    leaving.abort();
    await held;
    const none = await eventually('no request reported waiting', async () => {
      const row = await report();
      return row?.waiting === 0 ? row : undefined;
    });
    assert.equal(none.waiting_since, null);
    assert.ok(!('waiting_since' in (await readLoad(stack.sql, Date.now(), 60_000, name))[name]));
  });
});
