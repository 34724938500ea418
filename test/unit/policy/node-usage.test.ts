import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ReplicaState } from '../../../src/domain/cluster.ts';
import { type NodeUsage, nodeUsage } from '../../../src/policy/node-usage.ts';
import { gpus, node, profile, replica } from './fixtures.ts';

const n = node('n', gpus(8, { cores: 32 }));
const on = (states: ReplicaState[]) =>
  states.map((state, i) =>
    replica(`r${i}`, { model: 'm', profile: profile('p', gpus(2)), node: 'n' }, { state }),
  );
const amounts = (g: number, c = 0) => ({ gpus: g, cores: c, memory_gib: 0 });

describe('nodeUsage: what a node runs and reserves', () => {
  const cases: Record<string, { states: ReplicaState[]; want: NodeUsage }> = {
    'nothing on it: all free': {
      states: [],
      want: { allocated: amounts(0), reserved: amounts(0), free: amounts(8, 32), overcommitted: false },
    },
    'starting, ready and draining replicas are allocated; pending ones reserved; stopped and failed nothing':
      {
        states: ['starting', 'ready', 'draining', 'pending', 'stopped', 'failed'],
        want: { allocated: amounts(6), reserved: amounts(2), free: amounts(0, 32), overcommitted: false },
      },
    'a reservation beside draining victims makes free negative, and is no overcommit': {
      states: ['ready', 'ready', 'draining', 'draining', 'pending', 'pending'],
      want: { allocated: amounts(8), reserved: amounts(4), free: amounts(-4, 32), overcommitted: false },
    },
    'what runs beyond the capacity is overcommitted': {
      states: ['ready', 'ready', 'ready', 'ready', 'starting'],
      want: { allocated: amounts(10), reserved: amounts(0), free: amounts(-2, 32), overcommitted: true },
    },
  };
  for (const [name, c] of Object.entries(cases))
    it(name, () => assert.deepEqual(nodeUsage(n, on(c.states)), c.want));
});
