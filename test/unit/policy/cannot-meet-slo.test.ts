// A profile measured as unable to meet its SLO (max_concurrency_at_slo 0, stored before the API refused
// it) adds no capacity: were it tried, any load would scale it to max_replicas. It is skipped, and said so.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Measurement, Profile } from '../../../src/domain/model.ts';
import type { Snapshot } from '../../../src/domain/snapshot.ts';
import { decideModel } from '../../../src/policy/decide.ts';
import { orderProfiles } from '../../../src/policy/profiles.ts';
import { sizeForThroughput } from '../../../src/policy/sizing.ts';
import { gpus, loadOf, measured, memory, model, node, profile, replica, world } from './fixtures.ts';

const fast = profile('fast', gpus(1));
const slow = profile('slow', gpus(1));
const preferred = profile('preferred', gpus(1), { priority: 10 });
const nodes = [node('gpu-1', gpus(8))];
const WHY =
  'not servable: measured as unable to meet its SLO at any concurrency (max_concurrency_at_slo 0); bench it again to use it';

function scene(profiles: Profile[], measurements: Measurement[], parts: Partial<Snapshot> = {}) {
  return world({ models: [model('m', profiles, { max_replicas: 4 })], measurements, nodes, ...parts });
}

describe('a profile measured as unable to meet its SLO', () => {
  const cases: {
    name: string;
    profiles: Profile[];
    measurements: Measurement[];
    order: string[];
    placed: string | null;
    rejected: string[];
    pending?: string;
  }[] = [
    {
      name: 'at equal priority it goes after an unmeasured profile, which is placed instead',
      profiles: [fast, slow],
      measurements: [measured('m', 'slow', 0, 0)],
      order: ['fast', 'slow'],
      placed: 'fast',
      rejected: [],
    },
    {
      name: 'a higher priority does not bring it first',
      profiles: [preferred, fast],
      measurements: [measured('m', 'preferred', 0, 0), measured('m', 'fast', 8, 100)],
      order: ['fast', 'preferred'],
      placed: 'fast',
      rejected: [],
    },
    {
      name: 'alone, the model waits and the decision says why',
      profiles: [slow],
      measurements: [measured('m', 'slow', 0, 0)],
      order: ['slow'],
      placed: null,
      rejected: ['slow'],
      pending: 'slow cannot meet its SLO',
    },
    {
      name: 'a measurement above 0 is servable as before',
      profiles: [slow, fast],
      measurements: [measured('m', 'slow', 1, 10)],
      order: ['slow', 'fast'],
      placed: 'slow',
      rejected: [],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const s = loadOf(scene(c.profiles, c.measurements), 'm', 5);
      const byProfile = new Map(c.measurements.map((m) => [m.profile, m]));
      assert.deepEqual(
        orderProfiles(s.models[0], byProfile).map((p) => p.name),
        c.order,
      );
      const d = decideModel(s, 'm', memory());
      assert.equal(d.action === 'place' ? d.profile : null, c.placed, d.reason);
      assert.deepEqual(
        d.rejected.map((r) => r.profile),
        c.rejected,
      );
      for (const r of d.rejected) assert.equal(r.why, WHY);
      assert.equal(d.pending, c.pending);
      if (c.pending) assert.equal(d.reason, `scale up: 5 in flight and no replica; pending: ${c.pending}`);
    });
  }

  it('beside other reasons, the pending sentence names it too', () => {
    const big = profile('big', gpus(16));
    const s = loadOf(scene([big, slow], [measured('m', 'slow', 0, 0)]), 'm', 5);
    const d = decideModel(s, 'm', memory());
    assert.equal(d.pending, 'no room for big (needs 16 GPUs) and slow cannot meet its SLO');
    assert.deepEqual(
      d.rejected.map((r) => r.profile),
      ['big', 'slow'],
    );
  });

  it('its running replicas count 0 at SLO, and the model scales up on another profile, not on it', () => {
    const running = [0, 1].map((i) => replica(`z${i}`, { model: 'm', profile: slow, node: 'gpu-1' }));
    const d = decideModel(
      loadOf(scene([slow, fast], [measured('m', 'slow', 0, 0)], { replicas: running }), 'm', 3),
      'm',
      memory(),
    );
    assert.equal(d.inputs.capacity_at_slo, 0);
    assert.equal(d.profile, 'fast');
    assert.match(d.reason, /^scale up: 3 in flight > 0 at SLO on 2 replicas; placed fast on gpu-1$/);
  });

  it('sizing for a throughput says it cannot meet its SLO, not that it is unmeasured', () => {
    const sizing = sizeForThroughput(scene([slow], [measured('m', 'slow', 0, 0)]), 'm', 100);
    assert.deepEqual(sizing.blocked_by, ['profile slow cannot meet its SLO']);
    assert.equal(sizing.fits, false);
  });
});
