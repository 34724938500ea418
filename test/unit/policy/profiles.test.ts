import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Measurement, Profile } from '../../../src/domain/model.ts';
import { DEFAULT_POLICY_SETTINGS } from '../../../src/domain/snapshot.ts';
import { cannotMeetSlo, concurrencyOf, orderProfiles } from '../../../src/policy/profiles.ts';
import { cores, gpus, measured, model, profile } from './fixtures.ts';

const order = (profiles: Profile[], measurements: Measurement[]) =>
  orderProfiles(model('m', profiles), new Map(measurements.map((m) => [m.profile, m]))).map((p) => p.name);

describe('profile order', () => {
  it('1. higher priority first, whatever is measured', () => {
    assert.deepEqual(
      order(
        [profile('low', gpus(1)), profile('high', gpus(1), { priority: 5 })],
        [measured('m', 'low', 8, 9999)],
      ),
      ['high', 'low'],
    );
  });
  it('2. measured before unmeasured at equal priority', () => {
    assert.deepEqual(order([profile('a', gpus(1)), profile('z', gpus(1))], [measured('m', 'z', 8, 10)]), [
      'z',
      'a',
    ]);
  });
  it('3. tokens/s per GPU for GPU profiles', () => {
    const profiles = [profile('two', gpus(2)), profile('one', gpus(1))];
    // two: 2000 / 2 = 1000 per GPU; one: 1200 per GPU.
    assert.deepEqual(order(profiles, [measured('m', 'two', 8, 2000), measured('m', 'one', 8, 1200)]), [
      'one',
      'two',
    ]);
  });
  it('3. tokens/s per core for CPU-only profiles', () => {
    const profiles = [profile('eight', cores(8)), profile('four', cores(4))];
    // eight: 400 / 8 = 50 per core; four: 240 / 4 = 60 per core.
    assert.deepEqual(order(profiles, [measured('m', 'eight', 4, 400), measured('m', 'four', 4, 240)]), [
      'four',
      'eight',
    ]);
  });
  it('4. name when all else is equal; unmeasured ones go by name too', () => {
    assert.deepEqual(order([profile('b', gpus(1)), profile('c', gpus(1)), profile('a', gpus(1))], []), [
      'a',
      'b',
      'c',
    ]);
  });
});

describe('a profile measured as unable to meet its SLO (max_concurrency_at_slo 0) goes last', () => {
  const [fast, slow] = [profile('fast', gpus(1)), profile('slow', gpus(1))];
  const preferred = profile('preferred', gpus(1), { priority: 10 });
  it('at equal priority, after an unmeasured profile', () => {
    assert.deepEqual(order([fast, slow], [measured('m', 'slow', 0, 0)]), ['fast', 'slow']);
  });
  it('whatever its priority', () => {
    assert.deepEqual(
      order([preferred, fast], [measured('m', 'preferred', 0, 0), measured('m', 'fast', 8, 100)]),
      ['fast', 'preferred'],
    );
  });
  it('a measurement above 0 is servable as before', () => {
    assert.deepEqual(order([slow, fast], [measured('m', 'slow', 1, 10)]), ['slow', 'fast']);
  });
  it('unmeasured is not unable', () => {
    assert.equal(cannotMeetSlo(undefined), false);
    assert.equal(cannotMeetSlo(measured('m', 'slow', 0, 0)), true);
    assert.equal(cannotMeetSlo(measured('m', 'slow', 1, 10)), false);
  });
});

describe('concurrency of a profile', () => {
  const p = profile('p', gpus(1), { default_concurrency: 12 });
  it('measured first', () =>
    assert.equal(concurrencyOf(p, measured('m', 'p', 30, 1), DEFAULT_POLICY_SETTINGS), 30));
  it('then declared', () => assert.equal(concurrencyOf(p, undefined, DEFAULT_POLICY_SETTINGS), 12));
  it('then the configured default', () =>
    assert.equal(
      concurrencyOf(profile('q', gpus(1)), undefined, { ...DEFAULT_POLICY_SETTINGS, defaultConcurrency: 5 }),
      5,
    ));
});
