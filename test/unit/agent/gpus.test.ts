// A node's GPUs and capacity (src/agent/gpus.ts): nvidia-smi's CSV, the GPU model it names, the
// --capacity overrides with one sentence per mistake, detection with a stand-in nvidia-smi on PATH,
// and the allocator that never gives one GPU to two replicas.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import {
  detectCapacity,
  GpuAllocator,
  gpuModelOf,
  parseCapacity,
  parseNvidiaSmi,
} from '../../../src/agent/gpus.ts';

const H100S = Array.from({ length: 8 }, (_, i) => `${i}, NVIDIA H100 80GB HBM3, 81559 MiB`).join('\n');

describe("nvidia-smi's GPU list", () => {
  it('reads index, name and memory of each line', () => {
    assert.deepEqual(
      parseNvidiaSmi('0, NVIDIA A100-SXM4-80GB, 81920 MiB\n1, NVIDIA A100-SXM4-80GB, 81920 MiB\n'),
      [
        { index: 0, name: 'NVIDIA A100-SXM4-80GB', memoryMib: 81920 },
        { index: 1, name: 'NVIDIA A100-SXM4-80GB', memoryMib: 81920 },
      ],
    );
    assert.equal(parseNvidiaSmi(H100S).length, 8);
    assert.deepEqual(parseNvidiaSmi(''), []);
  });

  it('refuses a line of another shape, and an index listed twice, in a sentence', () => {
    assert.throws(() => parseNvidiaSmi('0, NVIDIA H100, 81559 MiB\nNo devices were found'), {
      message: `nvidia-smi's line 2 is not "index, name, memory MiB": "No devices were found"`,
    });
    assert.throws(() => parseNvidiaSmi('0, A, 1 MiB\n0, A, 1 MiB'), {
      message: 'nvidia-smi lists GPU 0 twice',
    });
  });

  const MODELS: [string, string | undefined][] = [
    ['NVIDIA H100 80GB HBM3', 'H100'],
    ['NVIDIA A100-SXM4-80GB', 'A100'],
    ['NVIDIA GeForce RTX 4090', 'RTX-4090'],
    ['NVIDIA RTX A6000', 'RTX-A6000'],
    ['Tesla T4', 'T4'],
    ['NVIDIA L40S', 'L40S'],
  ];
  for (const [name, model] of MODELS) {
    it(`names ${name} ${model}`, () => assert.equal(gpuModelOf([{ index: 0, name, memoryMib: 1 }]), model));
  }

  it('names no model for mixed GPUs, nor for none', () => {
    const gpus = parseNvidiaSmi('0, NVIDIA H100 80GB HBM3, 81559 MiB\n1, NVIDIA L40S, 46068 MiB');
    assert.equal(gpuModelOf(gpus), undefined);
    assert.equal(gpuModelOf([]), undefined);
  });
});

describe('--capacity', () => {
  it('takes any of gpus, cores and memory_gib', () => {
    assert.deepEqual(parseCapacity('gpus=8,cores=96,memory_gib=1024'), {
      gpus: 8,
      cores: 96,
      memory_gib: 1024,
    });
    assert.deepEqual(parseCapacity(' cores = 7.5 '), { cores: 7.5 });
  });

  const MISTAKES: [string, string][] = [
    ['gpus', '--capacity takes name=value pairs like gpus=8,cores=96, not "gpus"'],
    ['gpus=8,', '--capacity takes name=value pairs like gpus=8,cores=96, not ""'],
    ['gpus=eight', '--capacity gpus must be a number, not "eight"'],
    ['gpus=', '--capacity gpus must be a number, not ""'],
    ['gpus=1,gpus=2', '--capacity gives gpus twice'],
    ['gpus=1.5', '--capacity gpus must be a whole number'],
    ['cores=-1', '--capacity cores must not be negative'],
    ['memory_gib=0.0001', '--capacity memory_gib must have at most 3 decimals (it counts in steps of 0.001)'],
    ['tpus=4', '--capacity unknown dimension "tpus" (gpus, cores, memory_gib)'],
  ];
  for (const [text, sentence] of MISTAKES) {
    it(`refuses "${text}": ${sentence}`, () =>
      assert.throws(() => parseCapacity(text), { message: sentence }));
  }
});

describe("a node's capacity", () => {
  const work = mkdtempSync(join(tmpdir(), 'llmgw-gpus-'));
  after(() => rmSync(work, { recursive: true, force: true }));
  const meminfo = async () => 'MemTotal:       16318480 kB\nMemFree:         1234 kB\n';
  /** A PATH whose nvidia-smi prints `output` and exits with `code`. */
  const standIn = (name: string, output: string, code = 0) => {
    const bin = join(work, name);
    rmSync(bin, { recursive: true, force: true });
    writeFileSync(join(work, `${name}.out`), output);
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'nvidia-smi'), `#!/bin/sh\ncat '${join(work, `${name}.out`)}'\nexit ${code}\n`);
    chmodSync(join(bin, 'nvidia-smi'), 0o755);
    return { PATH: `${bin}:/usr/bin:/bin` };
  };

  it('detects the GPUs and their model from nvidia-smi on PATH, cores and memory from the OS', async () => {
    const found = await detectCapacity({}, { env: standIn('eight', H100S), meminfo, cores: () => 96 });
    assert.deepEqual(found, {
      capacity: { gpus: 8, cores: 96, memory_gib: 15 },
      gpuModel: 'H100',
      gpuIndices: [0, 1, 2, 3, 4, 5, 6, 7],
    });
  });

  it('has no GPUs without nvidia-smi, unless declared; then numbered from 0', async () => {
    const env = { PATH: join(work, 'nowhere') };
    assert.equal((await detectCapacity({}, { env, meminfo })).capacity.gpus, 0);
    const declared = await detectCapacity({ gpus: 2, memory_gib: 64 }, { env, meminfo, cores: () => 4 });
    assert.deepEqual(declared, {
      capacity: { gpus: 2, cores: 4, memory_gib: 64 },
      gpuModel: undefined,
      gpuIndices: [0, 1],
    });
  });

  it('gives fewer GPUs than nvidia-smi lists when told, and refuses more', async () => {
    const env = standIn('few', H100S);
    assert.deepEqual((await detectCapacity({ gpus: 3 }, { env, meminfo })).gpuIndices, [0, 1, 2]);
    await assert.rejects(detectCapacity({ gpus: 9 }, { env, meminfo }), {
      message: '--capacity gpus=9 is more than the 8 GPUs nvidia-smi lists',
    });
  });

  it('says so when nvidia-smi is there but fails', async () => {
    const env = standIn(
      'broken',
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
      9,
    );
    await assert.rejects(detectCapacity({}, { env, meminfo }), {
      message:
        "nvidia-smi failed (NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.); fix the driver, or declare --capacity gpus=0",
    });
  });
});

describe('the GPU allocator', () => {
  it('gives the lowest free GPUs, the same ones again to a retried start, and frees them on release', () => {
    const gpus = new GpuAllocator([0, 1, 2, 3, 4, 5, 6, 7]);
    assert.deepEqual(gpus.allocate('a', 4), [0, 1, 2, 3]);
    assert.deepEqual(gpus.allocate('b', 4), [4, 5, 6, 7]);
    assert.deepEqual(gpus.allocate('a', 4), [0, 1, 2, 3]);
    assert.throws(() => gpus.allocate('c', 1), { message: 'replica c needs 1 GPUs and 0 of 8 are free' });
    gpus.release('a');
    assert.deepEqual(gpus.allocate('c', 2), [0, 1]);
    assert.deepEqual(gpus.allocate('cpu-only', 0), []);
  });

  it('takes back the GPUs of adopted engines, refusing one another replica holds', () => {
    const gpus = new GpuAllocator([0, 1, 2, 3]);
    gpus.adopt('a', [2, 3]);
    assert.deepEqual(gpus.allocate('b', 2), [0, 1]);
    assert.throws(() => gpus.adopt('c', [1]), { message: 'GPU 1 of replica c is held by replica b' });
    assert.throws(() => gpus.adopt('c', [9]), { message: 'GPU 9 of replica c is not on this node' });
  });

  it('never gives one GPU to two live replicas, whatever the starts and stops', () => {
    const step = fc.oneof(
      fc.record({ start: fc.integer({ min: 0, max: 9 }), gpus: fc.integer({ min: 0, max: 5 }) }),
      fc.record({ stop: fc.integer({ min: 0, max: 9 }) }),
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 15 }), { minLength: 1, maxLength: 8 }),
        fc.array(step, { maxLength: 60 }),
        (indices, steps) => {
          const gpus = new GpuAllocator(indices);
          const live = new Map<string, number[]>();
          for (const s of steps) {
            if ('stop' in s) {
              gpus.release(`r${s.stop}`);
              live.delete(`r${s.stop}`);
              continue;
            }
            const replica = `r${s.start}`;
            const used = [...live.values()].flat().length;
            try {
              const given = gpus.allocate(replica, s.gpus);
              assert.equal(given.length, s.gpus);
              live.set(replica, given);
            } catch {
              // Refused only when too few are free, or the replica already holds another count.
              assert.ok(indices.length - used < s.gpus || (live.get(replica)?.length ?? s.gpus) !== s.gpus);
            }
            const held = [...live.values()].flat();
            assert.equal(new Set(held).size, held.length, 'a GPU given twice');
            assert.ok(held.every((index) => indices.includes(index)));
          }
        },
      ),
    );
  });
});
