// Reconcilers keep running through an upgrade, and the new workflow code replays their histories. A
// change of what a pass schedules must keep those histories replaying (Temporal's patch lifecycle:
// docs/architecture.md "Retiring history compatibility"). These are the histories an open run could
// still have: a burst from one replica to eight and its resyncs, recorded by the code before activity
// results had one shape (reconcile-burst-since-look-again) and by the code since (reconcile-burst-one-
// shape). Histories of older code are retired there, once no run begun under it can be open.
// `npm run record-history -- NAME` records a new one from a real run when the workflow changes on
// purpose. The replica-* histories are the workflows of an agent's node (a start, a drain, a log read),
// recorded on the time-skipping server with stand-in activities as
// test/unit/workflows/replica-on-node.test.ts runs them.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import proto from '@temporalio/proto';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleWorkflows, quietRuntime } from './workflow-harness.ts';

const HISTORIES = join(import.meta.dirname, '..', '..', 'fixtures', 'histories');

describe('reconciler histories of earlier code', () => {
  // Bundled once for every history: a bundle takes seconds.
  let workflowBundle: WorkflowBundleWithSourceMap;
  before(async () => {
    // The end of each history runs on into a local activity the replayer has not: its lines are noise.
    quietRuntime();
    workflowBundle = await bundleWorkflows();
  });
  for (const file of readdirSync(HISTORIES).filter((name) => name.endsWith('.pb'))) {
    it(`replay without a nondeterminism error: ${file}`, async () => {
      const history = proto.temporal.api.history.v1.History.decode(readFileSync(join(HISTORIES, file)));
      await Worker.runReplayHistory({ workflowBundle }, history);
    });
  }
});
