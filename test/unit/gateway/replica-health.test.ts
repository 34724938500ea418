// Which replicas the gateway routes to (src/gateway/replica-health.ts): ejected on failures in a row, on
// failed health probes and as latency outliers, each with its reason, and taken back by passing probes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { readConfig } from '../../../src/config.ts';
import {
  EJECTED_PROBE_MS,
  type EjectionReason,
  LATENCY_EJECT_MS,
  LATENCY_SAMPLES,
  ReplicaHealth,
} from '../../../src/gateway/replica-health.ts';

const settings = readConfig({}).gateway;
const replica = (id: string) => ({ id, endpoint: `http://127.0.0.1:1/${id}/v1` });
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A health of replicas r1..rN of model m, its clock moved by hand and its probes answered by `passes`. */
function setUp(count = 2, overrides: Partial<typeof settings> = {}) {
  let at = 1_000_000;
  const passes = new Map<string, boolean>();
  const probed: string[] = [];
  const health = new ReplicaHealth(
    { ...settings, ...overrides },
    async (upstream) => {
      probed.push(upstream.id);
      return passes.get(upstream.id) ?? true;
    },
    () => at,
  );
  const ejections: [string, EjectionReason][] = [];
  health.onEjection((_model, id, reason) => ejections.push([id, reason]));
  const replicas = Array.from({ length: count }, (_, i) => replica(`r${i + 1}`));
  health.watch([{ model: 'm', replicas }]);
  /** Moves the clock by `ms` and lets due probes answer. */
  const pass = async (ms: number) => {
    at += ms;
    health.probeDue();
    await settle();
  };
  return { health, replicas, passes, probed, ejections, pass };
}

describe('ReplicaHealth', () => {
  it(`ejects a replica after ${settings.ejectFailures} failures in a row (errors), and takes it back after ${settings.healthHealthy} passing probes`, async () => {
    const { health, replicas, passes, ejections, pass } = setUp();
    passes.set('r1', false);
    for (let i = 1; i < settings.ejectFailures; i++) health.failed(replicas[0]);
    assert.equal(health.routable('r1'), true, 'fewer failures than the bound');
    health.failed(replicas[0], 'errors', 'ECONNREFUSED');
    assert.equal(health.routable('r1'), false);
    assert.deepEqual(ejections, [['r1', 'errors']]);
    assert.match(health.view()[0].ejected!.detail, /3 requests in a row failed \(last: ECONNREFUSED\)/);
    await pass(EJECTED_PROBE_MS);
    assert.equal(health.routable('r1'), false, 'the probe failed');
    passes.set('r1', true);
    for (let i = 0; i < settings.healthHealthy; i++) await pass(EJECTED_PROBE_MS);
    assert.equal(health.routable('r1'), true);
    assert.equal(health.view()[0].ejected, null);
    assert.equal(health.view()[0].ejections, 1);
  });

  it('first-byte timeouts in a row eject with their own reason', () => {
    const { health, replicas, ejections } = setUp();
    for (let i = 0; i < settings.ejectFailures; i++) health.failed(replicas[1], 'first_byte_timeout');
    assert.deepEqual(ejections, [['r2', 'first_byte_timeout']]);
  });

  it('a success in between starts the count again: failures must be in a row', () => {
    const { health, replicas } = setUp();
    for (let round = 0; round < 3; round++) {
      for (let i = 1; i < settings.ejectFailures; i++) health.failed(replicas[0]);
      health.succeeded('r1');
    }
    assert.equal(health.routable('r1'), true);
  });

  it(`probes every replica every interval, and ejects one whose probes fail ${settings.healthUnhealthy} times in a row (health_check)`, async () => {
    const { health, passes, probed, ejections, pass } = setUp();
    await pass(settings.healthIntervalMs - 1);
    assert.deepEqual(probed, [], 'not due yet');
    await pass(1);
    assert.deepEqual(probed.sort(), ['r1', 'r2']);
    passes.set('r2', false);
    for (let i = 0; i < settings.healthUnhealthy; i++) await pass(settings.healthIntervalMs);
    assert.deepEqual(ejections, [['r2', 'health_check']]);
    assert.equal(health.routable('r2'), false);
    assert.equal(health.routable('r1'), true);
  });

  it('ejects a replica whose time to first byte is an outlier, for a while, and never more than half of them', async () => {
    const { health, replicas, ejections, pass } = setUp(3);
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      health.observeTtft(replicas[0], 100);
      health.observeTtft(replicas[1], 120);
    }
    for (let i = 0; i < LATENCY_SAMPLES; i++)
      health.observeTtft(replicas[2], 100 * settings.latencyOutlierFactor + 50);
    assert.deepEqual(ejections, [['r3', 'latency']]);
    assert.match(health.view()[2].ejected!.detail, /time to first byte/);
    // A second slow replica would make two of three out for latency: it stays.
    for (let i = 0; i < 4 * LATENCY_SAMPLES; i++) health.observeTtft(replicas[1], 10_000);
    assert.equal(health.routable('r2'), true);
    // Passing probes do not bring it back before its ejection time is over.
    for (let i = 0; i < 5; i++) await pass(EJECTED_PROBE_MS);
    assert.equal(health.routable('r3'), false);
    await pass(LATENCY_EJECT_MS);
    await pass(EJECTED_PROBE_MS);
    assert.equal(health.routable('r3'), true);
  });

  it('no replica is a latency outlier below the floor or when all are alike (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 60, maxLength: 120 }), (times) => {
        const { health, replicas, ejections } = setUp(3);
        // Every replica sees the same times, in turn: none is slower than the others.
        for (const ms of times) for (const r of replicas) health.observeTtft(r, ms);
        assert.deepEqual(ejections, []);
      }),
    );
  });

  it('forgets a replica the routing table no longer has, and stops probing it', async () => {
    const { health, replicas, probed, pass } = setUp();
    for (let i = 0; i < settings.ejectFailures; i++) health.failed(replicas[0]);
    health.watch([{ model: 'm', replicas: [replicas[1]] }]);
    await pass(3 * settings.healthIntervalMs);
    assert.deepEqual(probed, ['r2']);
    assert.equal(health.routable('r1'), true);
  });
});
