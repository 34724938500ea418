import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Snapshot } from '../../../src/domain/snapshot.ts';
import { type LoadReading, loadOf } from '../../../src/policy/load.ts';
import { buildView } from '../../../src/policy/view.ts';
import { chatScene, NOW, SECOND } from './fixtures.ts';

const reported = (inFlight: number, waiting: number, ageMs: number): Snapshot => ({
  ...chatScene(),
  load: { chat: { in_flight: inFlight, waiting, reported_at: NOW - ageMs } },
});

describe('loadOf: L, or why it is unknown', () => {
  const cases: Record<string, { s: Snapshot; want: LoadReading }> = {
    'never reported': { s: chatScene(), want: { inFlight: null, why: 'load never reported' } },
    'running and waiting requests count alike, the waiting ones also apart': {
      s: reported(28, 3, 0),
      want: { inFlight: 31, waiting: 3 },
    },
    'a report as old as the staleness bound (60 s) still counts': {
      s: reported(5, 0, 60 * SECOND),
      want: { inFlight: 5, waiting: 0 },
    },
    'an older one is unknown, and says how old': {
      s: reported(5, 0, 61 * SECOND),
      want: { inFlight: null, why: 'load unknown (last report 61 s ago)' },
    },
  };
  for (const [name, c] of Object.entries(cases)) {
    it(name, () => assert.deepEqual(loadOf(buildView(c.s), 'chat'), c.want));
  }
});
