import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ModelStatus, modelStatus } from '../../../src/domain/model-status.ts';

// The one status rule, read by the model list and by the reconciler (its query and search attributes).
describe('modelStatus', () => {
  const waits = [{ code: 'no_room', profile: 'a', needs: { gpus: 1 } }];
  const cases: {
    name: string;
    deleting: boolean;
    newest: Parameters<typeof modelStatus>[1];
    status: ModelStatus;
  }[] = [
    { name: 'no decision yet', deleting: false, newest: null, status: 'new' },
    { name: 'nothing to do', deleting: false, newest: { action: 'none' }, status: 'steady' },
    {
      name: 'waits for codes',
      deleting: false,
      newest: { action: 'none', pending: waits },
      status: 'pending',
    },
    {
      name: 'waits, as a decision stored before codes said it',
      deleting: false,
      newest: { action: 'none', pending: 'no room for a (needs 1 GPU)' },
      status: 'pending',
    },
    {
      name: 'stored with no pending',
      deleting: false,
      newest: { action: 'none', pending: null },
      status: 'steady',
    },
    { name: 'placed', deleting: false, newest: { action: 'place' }, status: 'scaling' },
    { name: 'reclaimed for', deleting: false, newest: { action: 'reclaim' }, status: 'scaling' },
    { name: 'removed', deleting: false, newest: { action: 'remove' }, status: 'scaling' },
    {
      name: 'a note of a replica reclaimed from it',
      deleting: false,
      newest: { action: 'reclaimed' },
      status: 'scaling',
    },
    {
      name: 'deleted, whatever it decided',
      deleting: true,
      newest: { action: 'none', pending: waits },
      status: 'deleting',
    },
    { name: 'deleted before any decision', deleting: true, newest: null, status: 'deleting' },
  ];
  for (const c of cases) {
    it(c.name, () => assert.equal(modelStatus(c.deleting, c.newest), c.status));
  }
});
