import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type LoadZone, loadZone, wakesReconciler } from '../../../src/policy/load-zone.ts';

describe('load zones: when a load report wakes a reconciler', () => {
  const cases: { name: string; inFlight: number; replicas: number[]; zone: ReturnType<typeof loadZone> }[] = [
    { name: 'any load and no replica is above', inFlight: 1, replicas: [], zone: 'above' },
    { name: 'no load and no replica is within', inFlight: 0, replicas: [], zone: 'within' },
    { name: 'more than capacity is above', inFlight: 21, replicas: [10, 10], zone: 'above' },
    { name: 'exactly capacity is within', inFlight: 20, replicas: [10, 10], zone: 'within' },
    { name: '70% of the rest without one replica is below', inFlight: 7, replicas: [10, 10], zone: 'below' },
    { name: 'just over 70% of the rest is within', inFlight: 8, replicas: [10, 10], zone: 'within' },
    {
      name: 'a single replica is never below (nothing to take back)',
      inFlight: 0,
      replicas: [10],
      zone: 'within',
    },
    { name: 'the smallest replica is the one that could go', inFlight: 14, replicas: [4, 20], zone: 'below' },
  ];
  for (const { name, inFlight, replicas, zone } of cases) {
    it(name, () => assert.equal(loadZone(inFlight, replicas), zone));
  }
});

describe('whether a report wakes the reconciler last told', () => {
  const standing = (zone: LoadZone, capacity: number) => ({ zone, capacity, inFlight: 0 });
  const cases: {
    name: string;
    last?: ReturnType<typeof standing>;
    now: ReturnType<typeof standing>;
    wakes: boolean;
  }[] = [
    { name: 'the first report wakes it', now: standing('within', 10), wakes: true },
    { name: 'a zone change wakes it', last: standing('within', 10), now: standing('above', 10), wakes: true },
    {
      name: 'does not flap: the same zone and capacity',
      last: standing('above', 10),
      now: standing('above', 10),
      wakes: false,
    },
    {
      name: 'a new capacity out of the steady zone wakes it',
      last: standing('above', 10),
      now: standing('above', 20),
      wakes: true,
    },
    {
      name: 'a new capacity within the steady zone does not',
      last: standing('within', 10),
      now: standing('within', 20),
      wakes: false,
    },
  ];
  for (const { name, last, now, wakes } of cases) {
    it(name, () => assert.equal(wakesReconciler(last, now), wakes));
  }
});
