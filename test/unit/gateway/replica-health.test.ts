import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { FAILURES_TO_EJECT, PROBE_EVERY_MS, ReplicaHealth } from '../../../src/gateway/replica-health.ts';

const replica = { id: 'r1', endpoint: 'http://127.0.0.1:1/v1' };
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('ReplicaHealth', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setInterval'] }));
  afterEach(() => mock.timers.reset());

  it(`ejects a replica after ${FAILURES_TO_EJECT} failures in a row, and takes it back once a probe passes`, async () => {
    let healthy = false;
    const probed: string[] = [];
    const health = new ReplicaHealth(async (upstream) => {
      probed.push(upstream.id);
      return healthy;
    });
    for (let i = 1; i < FAILURES_TO_EJECT; i++) health.failed(replica);
    assert.equal(health.routable('r1'), true, 'fewer failures than the bound');
    health.failed(replica);
    assert.equal(health.routable('r1'), false);
    mock.timers.tick(PROBE_EVERY_MS);
    await settle();
    assert.equal(health.routable('r1'), false, 'the probe failed');
    healthy = true;
    mock.timers.tick(PROBE_EVERY_MS);
    await settle();
    assert.equal(health.routable('r1'), true);
    assert.deepEqual(probed, ['r1', 'r1']);
    health.stop();
  });

  it('a success in between starts the count again: failures must be in a row', () => {
    const health = new ReplicaHealth(async () => true);
    for (let round = 0; round < 3; round++) {
      for (let i = 1; i < FAILURES_TO_EJECT; i++) health.failed(replica);
      health.succeeded('r1');
    }
    assert.equal(health.routable('r1'), true);
  });

  it('forgets a replica the routing table no longer has, and stops probing it', async () => {
    let probes = 0;
    const health = new ReplicaHealth(async () => {
      probes++;
      return false;
    });
    for (let i = 0; i < FAILURES_TO_EJECT; i++) health.failed(replica);
    health.keepOnly(new Set(['r2']));
    mock.timers.tick(3 * PROBE_EVERY_MS);
    await settle();
    assert.equal(probes, 0);
    assert.equal(health.routable('r1'), true);
  });
});
