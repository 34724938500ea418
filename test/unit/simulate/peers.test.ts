import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hpaKeda } from '../../../src/simulate/peers/hpa-keda.ts';
import { llmdWva } from '../../../src/simulate/peers/llm-d-wva.ts';
import { rayServe } from '../../../src/simulate/peers/ray-serve.ts';
import type { PeerObservation, PeerRule } from '../../../src/simulate/replica-count.ts';

const seen = (now: number, replicas: number, inFlight: number): PeerObservation => {
  const running = Math.min(inFlight, replicas * 8);
  return {
    now,
    replicas,
    ready: replicas,
    running,
    waiting: inFlight - running,
    concurrency: 8,
    min: 1,
    max: 100,
  };
};

/** Feeds the rule one observation a second from 0 to `untilS`, following its answers; the count at each second. */
function drive(rule: PeerRule, start: number, inFlightAt: (s: number) => number, untilS: number): number[] {
  const counts: number[] = [];
  let replicas = start;
  for (let s = 0; s <= untilS; s++) {
    replicas = Math.max(1, rule(seen(s * 1000, replicas, inFlightAt(s))));
    counts.push(replicas);
  }
  return counts;
}

describe('HPA with KEDA', () => {
  it('scales up by at most max(100%, 4 pods) per sync', () => {
    const counts = drive(hpaKeda()(), 1, () => 200, 30);
    // 200 in flight ask for 25: at 0 s 1 -> 5 (4 pods > 100%), at 15 s 5 -> 10, at 30 s 10 -> 20.
    assert.deepEqual([counts[0], counts[14], counts[15], counts[29], counts[30]], [5, 5, 10, 10, 20]);
  });

  it('keeps the count within the tolerance, and scales down only to the highest count of the last 300 s', () => {
    assert.equal(drive(hpaKeda()(), 10, () => 85, 60).at(-1), 10); // 85 / 80 is within 10%
    const counts = drive(hpaKeda()(), 10, (s) => (s < 100 ? 80 : 8), 420);
    // The 90 s sync (80 in flight) recommends 10, the 105 s one (8 in flight) 1. That 10 stays in the
    // 300 s window through the sync at 390 s; at 405 s it has left.
    assert.deepEqual([counts[119], counts[390], counts[405]], [10, 10, 1]);
  });
});

describe('Ray Serve', () => {
  it('scales down only after 600 s of asking for fewer', () => {
    const counts = drive(rayServe()(), 10, () => 4, 700);
    assert.equal(counts[599], 10);
    assert.equal(counts[600], 2);
  });
});

describe('llm-d WVA', () => {
  it('adds one replica a minute while saturated, and none while one is not ready', () => {
    const rule = llmdWva()();
    assert.equal(rule(seen(0, 2, 40)), 3);
    assert.equal(rule({ ...seen(60_000, 3, 40), ready: 2 }), 3);
  });

  it('removes one when the load spread over one fewer still leaves the spare triggers met', () => {
    assert.equal(llmdWva()()(seen(0, 4, 8)), 3); // KV 0.25 -> 0.33 on 3, queue 0
    assert.equal(llmdWva()()(seen(0, 2, 8)), 2); // KV 0.5 -> 1.0 on 1: not safe
  });
});
