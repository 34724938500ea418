import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runPolicies } from '../../../src/simulate/experiment.ts';
import { FROM, HOUR_MS, held, loadOf, scene } from './scene.ts';

const byPolicy = (figures: ReturnType<typeof runPolicies>['figures']) =>
  Object.fromEntries(figures.map((f) => [f.policy, f]));

describe('the simulator accounts GPU-hours exactly', () => {
  // 12 requests in flight for the whole hour, 8 per replica: 2 replicas, which the run starts with.
  const load = loadOf({ chat: held(12, FROM - 1000, 2 * HOUR_MS) }, HOUR_MS);
  const figures = byPolicy(runPolicies(scene(), load).figures);

  it('gives 2 GPU-hours to each policy that keeps 2 replicas on a constant load', () => {
    for (const policy of ['llmgw', 'static-peak', 'hpa-keda', 'ray-serve-c']) {
      assert.equal(figures[policy].gpuHours, 2, policy);
      assert.equal(figures[policy].started, 0, policy);
      assert.equal(figures[policy].covered, 1, policy);
    }
  });

  it("gives Ray Serve's default target of 2 in flight per replica 6 replicas from its first upscale, 40 s in", () => {
    // Reports at 0 s (0 in flight) and 10 s (12): the mean 6 asks for 3 > 2 from 10 s on; after the
    // 30 s upscale delay, at 40 s, the mean of 10..40 s (12) asks for 12 / 2 = 6.
    assert.equal(figures['ray-serve'].gpuHours, (2 * 40 + 6 * 3560) / 3600);
    assert.equal(figures['ray-serve'].started, 4);
  });
});

describe('a step load', () => {
  // 4 in flight, then 16 more from 100.5 s: 20 in flight need 3 replicas of 8; the run starts with 1.
  const step = FROM + 100_500;
  const load = loadOf({ chat: [...held(4, FROM - 1000, HOUR_MS), ...held(16, step, HOUR_MS)] }, 400_000);
  const { runs } = runPolicies(scene(), load);
  const reaction = Object.fromEntries(
    runs.map((run) => [run.policy, (run.cluster.starts.find((s) => s.at >= step)?.at ?? Number.NaN) - step]),
  );

  it('is met by llmgw at the first load report after it (the next tick)', () => {
    assert.equal(reaction.llmgw, 500);
  });

  it('is met by HPA at its first sync after it (105 s), which asks KEDA for the load of that moment', () => {
    assert.equal(reaction['hpa-keda'], 4_500);
  });

  it('is met by llm-d WVA at its next minute loop (120 s), its replica being saturated', () => {
    assert.equal(reaction['llm-d-wva'], 19_500);
  });

  it('is met by Ray Serve once its 30 s look-back mean has asked for more for 30 s', () => {
    // Target 8: at 110 s the mean of 80..110 s is 8 (enough); at 111 s the 80 s report has left the
    // look-back and the mean of 90..110 s (9.3) asks for 2; 30 s later, at 141 s.
    assert.equal(reaction['ray-serve-c'], 40_500);
    // Target 2 (2 replicas since 50 s): the mean of 80..110 s (8) asks for 4 from 110 s; at 140 s.
    assert.equal(reaction['ray-serve'], 39_500);
  });

  it('is not met by the static allocation, sized for the peak beforehand', () => {
    assert.ok(Number.isNaN(reaction['static-peak']));
    assert.equal(runs.find((r) => r.policy === 'static-peak')!.cluster.of('chat').length, 3);
  });
});

describe('a step down', () => {
  // 20 in flight on 3 replicas, then 4 from 100.5 s: 1 replica would do.
  const drop = FROM + 100_500;
  const load = loadOf(
    { chat: [...held(4, FROM - 1000, HOUR_MS), ...held(16, FROM - 1000, 101_500)] },
    800_000,
  );
  const { runs } = runPolicies(scene(), load);
  const firstDrain = Object.fromEntries(
    runs.map((run) => [run.policy, (run.cluster.drains.find((d) => d.at >= drop)?.at ?? Number.NaN) - drop]),
  );

  it('is met by llmgw once the room it keeps for the rise it saw has decayed, and the 120 s window held', () => {
    // The first passes saw the load rise from none to 20: llmgw keeps room for that rise (decaying over
    // the hour, policy/load-growth.ts), so 3 replicas stay until 4 + the decayed rise fit on 2.
    assert.equal(firstDrain.llmgw, 600_500);
  });

  it('is met by HPA once the last recommendation of 3 (the 90 s sync) has left its 300 s window', () => {
    assert.equal(firstDrain['hpa-keda'], 304_500);
  });

  it("is met by Ray Serve after its 600 s downscale delay, counted from the look-back's first lower ask", () => {
    // At 110 s the mean of the 80..110 s reports (16) asks for 2 of 3; at 710 s it goes down to 1.
    assert.equal(firstDrain['ray-serve-c'], 609_500);
  });

  it('is not met by the static allocation', () => {
    assert.ok(Number.isNaN(firstDrain['static-peak']));
  });
});

describe('an idle model behind the gateway', () => {
  it('is taken back as the room kept for its rise decays: the gateway keeps its last report, none, fresh (the stale-load rule does not bite)', () => {
    // 20 in flight until 100.5 s, then none. Were the none to go stale at 161 s, before the 120 s window
    // held, unknown load would move nothing and 3 replicas would stay.
    const idle = loadOf({ chat: held(20, FROM - 1000, 101_500) }, 800_000);
    const llmgw = runPolicies(scene(), idle).runs.find((run) => run.policy === 'llmgw')!;
    assert.deepEqual(
      llmgw.cluster.drains.map((d) => d.at - (FROM + 100_500)),
      // The rise from none to 20 at the start keeps room for it, decaying: one replica goes once the
      // decayed rise fits on 2, the next only after the clock ends.
      [600_500],
      'the room kept for the rise it saw decays',
    );
    assert.equal(llmgw.cluster.of('chat').length, 2);
  });
});
