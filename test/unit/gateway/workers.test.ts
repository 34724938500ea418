import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WORKER_GC_FLAGS, WORKER_HEAP_FLAGS, workerExecArgv } from '../../../src/gateway/workers.ts';

describe("the gateway workers' flags", () => {
  const both = [...WORKER_HEAP_FLAGS, ...WORKER_GC_FLAGS];
  const cases: {
    name: string;
    execArgv: string[];
    nodeOptions?: string;
    spareCores?: boolean;
    added: string[];
  }[] = [
    {
      name: 'none given, no core to spare: the heap and collector flags are added',
      execArgv: [],
      added: both,
    },
    { name: "the process's own flags are kept first", execArgv: ['--import', 'x.mjs'], added: both },
    {
      name: 'NODE_OPTIONS without a heap size: both added',
      execArgv: [],
      nodeOptions: '--enable-source-maps --max-old-space-size=4096',
      added: both,
    },
    {
      name: 'a semi-space size given on the process: no heap flag added',
      execArgv: ['--max-semi-space-size=64'],
      added: WORKER_GC_FLAGS,
    },
    {
      // The only one of the heap sizes that NODE_OPTIONS accepts.
      name: 'a maximum semi-space in NODE_OPTIONS, with underscores: no heap flag added',
      execArgv: [],
      nodeOptions: ' --max_semi_space_size=8 ',
      added: WORKER_GC_FLAGS,
    },
    {
      name: 'an initial old space given',
      execArgv: ['--initial-old-space-size=512'],
      added: WORKER_GC_FLAGS,
    },
    {
      name: 'a flag that only begins alike is not one',
      execArgv: ['--max-semi-space-sizes=1', '--single-threaded-gcs'],
      added: both,
    },
    {
      name: "the collector's threads asked for: no collector flag added",
      execArgv: ['--no-single-threaded-gc'],
      added: WORKER_HEAP_FLAGS,
    },
    {
      name: 'the same in one word, with underscores',
      execArgv: ['--nosingle_threaded_gc'],
      added: WORKER_HEAP_FLAGS,
    },
    {
      name: 'V8 single-threaded as a whole: no collector flag added',
      execArgv: ['--single-threaded'],
      added: WORKER_HEAP_FLAGS,
    },
    {
      name: 'cores to spare beyond the workers: the heap flags only',
      execArgv: [],
      spareCores: true,
      added: WORKER_HEAP_FLAGS,
    },
    {
      name: 'both set by the operator: nothing added',
      execArgv: ['--single-threaded-gc', '--min-semi-space-size=8'],
      added: [],
    },
  ];
  for (const { name, execArgv, nodeOptions, spareCores = false, added } of cases) {
    it(name, () => {
      assert.deepEqual(workerExecArgv(execArgv, nodeOptions, spareCores), [...execArgv, ...added]);
    });
  }
});
