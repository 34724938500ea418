// Reconcilers keep running through an upgrade, and the new workflow code replays their histories. A
// change of what a pass schedules must keep those histories replaying (Temporal's patched()); these
// were recorded by earlier code (History protobufs): an idle model and one serving a replica, each
// through a few resyncs.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';

const WORKFLOWS = fileURLToPath(new URL('../../src/workflows/index.ts', import.meta.url));
const HISTORIES = join(import.meta.dirname, '..', 'fixtures', 'histories');

describe('reconciler histories of earlier code', () => {
  for (const file of readdirSync(HISTORIES).filter((name) => name.endsWith('.pb'))) {
    it(`replay without a nondeterminism error: ${file}`, async () => {
      const history = proto.temporal.api.history.v1.History.decode(readFileSync(join(HISTORIES, file)));
      await Worker.runReplayHistory({ workflowsPath: WORKFLOWS }, history);
    });
  }
});
