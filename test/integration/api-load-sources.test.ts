// Issue 19, item 6: load sources are bounded. A model takes reports from at most LLMGW_LOAD_SOURCES_MAX
// fresh sources (past that, 429 and nothing stored), a report deletes its model's expired reports, and
// the sum over sources is capped like a single report.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_REPORTED_REQUESTS } from '../../src/domain/model.ts';
import { newId } from '../../src/store/ids.ts';
import { assertError } from '../support/assertions.ts';
import { ok } from '../support/cluster.ts';
import { type Stack, startStack } from '../support/stack.ts';

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
});
