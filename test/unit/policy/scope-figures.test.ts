import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scopeFigures } from '../../../src/policy/scope-figures.ts';
import { SCOPES, spreadScene } from './fixtures.ts';

describe('scopeFigures', () => {
  it('gives every scope what it holds and borrows, zero when nothing', () => {
    const figures = scopeFigures(spreadScene());
    assert.deepEqual(
      [...figures.keys()],
      SCOPES.map((s) => s.key),
    );
    assert.deepEqual(figures.get('org:acme'), {
      holds: { gpus: 4, cores: 8, memory_gib: 0 },
      borrowed: { gpus: 2, cores: 8, memory_gib: 0 },
    });
    assert.deepEqual(figures.get('team:web'), {
      holds: { gpus: 0, cores: 0, memory_gib: 0 },
      borrowed: { gpus: 0, cores: 0, memory_gib: 0 },
    });
  });
});
