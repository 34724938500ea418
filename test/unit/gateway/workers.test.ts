import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  WORKER_GC_FLAGS,
  WORKER_HEAP_FLAGS,
  WORKER_PRETENURING_FLAGS,
  workerExecArgv,
} from '../../../src/gateway/workers.ts';

describe("the gateway workers' flags", () => {
  const all = [...WORKER_HEAP_FLAGS, ...WORKER_GC_FLAGS, ...WORKER_PRETENURING_FLAGS];
  const withoutHeap = [...WORKER_GC_FLAGS, ...WORKER_PRETENURING_FLAGS];
  const withoutGc = [...WORKER_HEAP_FLAGS, ...WORKER_PRETENURING_FLAGS];
  const cases: {
    name: string;
    execArgv: string[];
    nodeOptions?: string;
    spareCores?: boolean;
    added: string[];
  }[] = [
    {
      name: 'none given, no core to spare: the heap, collector and pretenuring flags are added',
      execArgv: [],
      added: all,
    },
    { name: "the process's own flags are kept first", execArgv: ['--import', 'x.mjs'], added: all },
    {
      name: 'NODE_OPTIONS without a heap size: all added',
      execArgv: [],
      nodeOptions: '--enable-source-maps --max-old-space-size=4096',
      added: all,
    },
    {
      name: 'a semi-space size given on the process: no heap flag added',
      execArgv: ['--max-semi-space-size=64'],
      added: withoutHeap,
    },
    {
      // The only one of the heap sizes that NODE_OPTIONS accepts.
      name: 'a maximum semi-space in NODE_OPTIONS, with underscores: no heap flag added',
      execArgv: [],
      nodeOptions: ' --max_semi_space_size=8 ',
      added: withoutHeap,
    },
    {
      name: 'an initial old space given',
      execArgv: ['--initial-old-space-size=512'],
      added: withoutHeap,
    },
    {
      name: 'a flag that only begins alike is not one',
      execArgv: ['--max-semi-space-sizes=1', '--single-threaded-gcs', '--no-allocation-site-pretenurings'],
      added: all,
    },
    {
      name: "the collector's threads asked for: no collector flag added",
      execArgv: ['--no-single-threaded-gc'],
      added: withoutGc,
    },
    {
      name: 'the same in one word, with underscores',
      execArgv: ['--nosingle_threaded_gc'],
      added: withoutGc,
    },
    {
      name: 'V8 single-threaded as a whole: no collector flag added',
      execArgv: ['--single-threaded'],
      added: withoutGc,
    },
    {
      name: 'cores to spare beyond the workers: no collector flag',
      execArgv: [],
      spareCores: true,
      added: withoutGc,
    },
    {
      name: 'pretenuring asked for by the operator: no pretenuring flag added',
      execArgv: ['--allocation-site-pretenuring'],
      added: [...WORKER_HEAP_FLAGS, ...WORKER_GC_FLAGS],
    },
    {
      name: 'pretenuring turned off by the operator, in one word with underscores: not added twice',
      execArgv: ['--noallocation_site_pretenuring'],
      added: [...WORKER_HEAP_FLAGS, ...WORKER_GC_FLAGS],
    },
    {
      name: 'all three set by the operator: nothing added',
      execArgv: ['--single-threaded-gc', '--min-semi-space-size=8', '--no-allocation-site-pretenuring'],
      added: [],
    },
  ];
  for (const { name, execArgv, nodeOptions, spareCores = false, added } of cases) {
    it(name, () => {
      assert.deepEqual(workerExecArgv(execArgv, nodeOptions, spareCores), [...execArgv, ...added]);
    });
  }
});
