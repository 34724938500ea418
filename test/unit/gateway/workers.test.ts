import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WORKER_HEAP_FLAGS, workerExecArgv } from '../../../src/gateway/workers.ts';

describe("the gateway workers' flags", () => {
  const cases: { name: string; execArgv: string[]; nodeOptions?: string; heap: boolean }[] = [
    { name: 'none given: the heap flags are added', execArgv: [], heap: true },
    { name: "the process's own flags are kept first", execArgv: ['--import', 'x.mjs'], heap: true },
    {
      name: 'NODE_OPTIONS without a heap size: added',
      execArgv: [],
      nodeOptions: '--enable-source-maps --max-old-space-size=4096',
      heap: true,
    },
    {
      name: 'a semi-space size given on the process: none added',
      execArgv: ['--max-semi-space-size=64'],
      heap: false,
    },
    {
      // The only one of the three that NODE_OPTIONS accepts.
      name: 'a maximum semi-space in NODE_OPTIONS, with underscores: none added',
      execArgv: [],
      nodeOptions: ' --max_semi_space_size=8 ',
      heap: false,
    },
    { name: 'an initial old space given', execArgv: ['--initial-old-space-size=512'], heap: false },
    { name: 'a flag that only begins alike is not one', execArgv: ['--max-semi-space-sizes=1'], heap: true },
  ];
  for (const { name, execArgv, nodeOptions, heap } of cases) {
    it(name, () => {
      assert.deepEqual(
        workerExecArgv(execArgv, nodeOptions),
        heap ? [...execArgv, ...WORKER_HEAP_FLAGS] : execArgv,
      );
    });
  }
});
