import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { TalliedCounter } from '../../../src/gateway/metrics.ts';

/** The counter's series in the text a scrape reads, without its HELP and TYPE lines. */
async function scraped(registry: Registry) {
  return (await registry.metrics())
    .split('\n')
    .filter((line) => line.startsWith('requests_total{'))
    .sort();
}

describe('a tallied counter', () => {
  const setUp = () => {
    const registry = new Registry();
    const counter = new TalliedCounter(
      { name: 'requests_total', help: 'Requests.', registers: [registry] },
      'model',
      'status',
    );
    return { registry, counter };
  };

  it('shows each pair of labels it counted, with its count, once read', async () => {
    const { registry, counter } = setUp();
    counter.inc('chat', 200);
    counter.inc('chat', 200);
    counter.inc('chat', 503);
    counter.inc('code', 200);
    assert.deepEqual(await scraped(registry), [
      'requests_total{model="chat",status="200"} 2',
      'requests_total{model="chat",status="503"} 1',
      'requests_total{model="code",status="200"} 1',
    ]);
  });

  it('adds what came after a read to what was read before, and a read with nothing new changes nothing', async () => {
    const { registry, counter } = setUp();
    counter.inc('chat', 200);
    await scraped(registry);
    counter.inc('chat', 200);
    counter.inc('chat', 200);
    const second = await scraped(registry);
    assert.deepEqual(second, ['requests_total{model="chat",status="200"} 3']);
    assert.deepEqual(await scraped(registry), second);
  });

  it('shows no series before its first count', async () => {
    const { registry } = setUp();
    assert.deepEqual(await scraped(registry), []);
  });
});
