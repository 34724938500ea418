import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { availableParallelism, totalmem } from 'node:os';
import { describeIssue } from '../contracts/errors.ts';
import { ResourcesSchema } from '../contracts/schemas/resources.ts';
import { parseResourcePairs } from '../domain/resource-pairs.ts';
import type { Resources } from '../domain/resources.ts';

/** One GPU as nvidia-smi lists it. */
export interface Gpu {
  index: number;
  name: string;
  memoryMib: number;
}

/** The query the agent runs, whose CSV parseNvidiaSmi reads. */
export const NVIDIA_SMI_ARGS = ['--query-gpu=index,name,memory.total', '--format=csv,noheader'];

/** `0, NVIDIA H100 80GB HBM3, 81559 MiB` per line, as `nvidia-smi` prints for NVIDIA_SMI_ARGS. */
export function parseNvidiaSmi(text: string): Gpu[] {
  const gpus = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line, at) => {
      const match = /^(\d+)\s*,\s*(.+?)\s*,\s*(\d+)\s*MiB$/.exec(line);
      if (!match) {
        throw new Error(
          `nvidia-smi's line ${at + 1} is not "index, name, memory MiB": ${JSON.stringify(line)}`,
        );
      }
      return { index: Number(match[1]), name: match[2], memoryMib: Number(match[3]) };
    });
  const indices = gpus.map((gpu) => gpu.index);
  const twice = indices.find((index, at) => indices.indexOf(index) !== at);
  if (twice !== undefined) throw new Error(`nvidia-smi lists GPU ${twice} twice`);
  return gpus;
}

/**
 * The model a node's profiles name, from nvidia-smi's names: "NVIDIA H100 80GB HBM3" is H100,
 * "NVIDIA A100-SXM4-80GB" A100, "NVIDIA GeForce RTX 4090" RTX-4090. Undefined for mixed GPUs: then
 * the operator says (--gpu-model).
 */
export function gpuModelOf(gpus: readonly Gpu[]): string | undefined {
  const models = new Set(
    gpus.map((gpu) => {
      const words = gpu.name.replace(/^((NVIDIA|Tesla|GeForce|Quadro)\s+)+/i, '').split(/[\s-]+/);
      return /^(RTX|GTX|TITAN)$/i.test(words[0]) && words[1] ? `${words[0]}-${words[1]}` : words[0];
    }),
  );
  return models.size === 1 ? [...models][0] : undefined;
}

/** What the node has, as the agent registers it, and the GPUs it hands out (their indices). */
export interface NodeCapacity {
  capacity: Required<Resources>;
  gpuModel?: string;
  gpuIndices: number[];
}

export interface CapacitySources {
  /** Whose PATH nvidia-smi is looked for on (default this process's). */
  env?: NodeJS.ProcessEnv;
  /** /proc/meminfo's text, or null where there is none. */
  meminfo?: () => Promise<string | null>;
  cores?: () => number;
}

/**
 * The node's capacity: GPUs and their model from nvidia-smi (none without it), cores from the OS, memory
 * from /proc/meminfo (whole GiB: the OS keeps the rest). `overrides` (--capacity) win; GPUs declared
 * where nvidia-smi lists none are numbered from 0, and more than it lists is refused.
 */
export async function detectCapacity(
  overrides: Resources = {},
  sources: CapacitySources = {},
): Promise<NodeCapacity> {
  const smi = await runNvidiaSmi(sources.env ?? process.env);
  const gpus = smi === null ? [] : parseNvidiaSmi(smi);
  const meminfo = await (sources.meminfo ?? readMeminfo)();
  const memoryBytes = meminfo === null ? totalmem() : memTotalBytes(meminfo);
  const detected = gpus.map((gpu) => gpu.index).sort((a, b) => a - b);
  const gpuCount = overrides.gpus ?? detected.length;
  if (smi !== null && gpuCount > detected.length) {
    throw new Error(`--capacity gpus=${gpuCount} is more than the ${detected.length} GPUs nvidia-smi lists`);
  }
  return {
    capacity: {
      gpus: gpuCount,
      cores: overrides.cores ?? (sources.cores ?? availableParallelism)(),
      memory_gib: overrides.memory_gib ?? Math.floor(memoryBytes / 2 ** 30),
    },
    gpuModel: gpuModelOf(gpus),
    gpuIndices: smi === null ? Array.from({ length: gpuCount }, (_, i) => i) : detected.slice(0, gpuCount),
  };
}

/** nvidia-smi's answer, null when it is not installed; a driver that fails it is said in a sentence. */
function runNvidiaSmi(env: NodeJS.ProcessEnv): Promise<string | null> {
  return new Promise((resolve, reject) => {
    execFile('nvidia-smi', NVIDIA_SMI_ARGS, { timeout: 30_000, env }, (error, stdout, stderr) => {
      if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') return resolve(null);
      if (error) {
        const why = (stderr || stdout).trim().split('\n')[0] || error.message;
        return reject(new Error(`nvidia-smi failed (${why}); fix the driver, or declare --capacity gpus=0`));
      }
      resolve(stdout);
    });
  });
}

async function readMeminfo(): Promise<string | null> {
  return readFile('/proc/meminfo', 'utf8').catch(() => null);
}

function memTotalBytes(meminfo: string): number {
  const kib = /^MemTotal:\s+(\d+)\s*kB$/m.exec(meminfo)?.[1];
  if (!kib) throw new Error('/proc/meminfo has no "MemTotal: N kB" line');
  return Number(kib) * 1024;
}

/** `gpus=8,cores=96,memory_gib=1024` (--capacity): the dimensions given, each checked as the API checks it. */
export function parseCapacity(text: string): Resources {
  const checked = ResourcesSchema.safeParse(parseResourcePairs(text, '--capacity'));
  if (!checked.success) throw new Error(`--capacity ${describeIssue(checked.error.issues[0])}`);
  return checked.data;
}

/**
 * Hands each replica GPUs of its own: an index is never given to two replicas at once. Asking again
 * for a replica that holds GPUs gives it the same ones (a retried start), and an agent that restarts
 * gives its adopted replicas back the GPUs they run on.
 */
export class GpuAllocator {
  private readonly holders = new Map<number, string>();

  constructor(private readonly indices: readonly number[]) {}

  /** The lowest free indices; a sentence when fewer are free than asked for. */
  allocate(replica: string, count: number): number[] {
    const held = this.heldBy(replica);
    if (held.length > 0) {
      if (held.length !== count) throw new Error(`replica ${replica} already holds GPUs ${held.join(',')}`);
      return held;
    }
    const free = this.indices.filter((index) => !this.holders.has(index));
    if (free.length < count) {
      throw new Error(
        `replica ${replica} needs ${count} GPUs and ${free.length} of ${this.indices.length} are free`,
      );
    }
    const given = free.slice(0, count);
    for (const index of given) this.holders.set(index, replica);
    return given;
  }

  /** Records GPUs a running engine already has (after a restart); refuses any another replica holds. */
  adopt(replica: string, gpus: readonly number[]) {
    for (const index of gpus) {
      const holder = this.holders.get(index);
      if (!this.indices.includes(index))
        throw new Error(`GPU ${index} of replica ${replica} is not on this node`);
      if (holder !== undefined && holder !== replica) {
        throw new Error(`GPU ${index} of replica ${replica} is held by replica ${holder}`);
      }
    }
    for (const index of gpus) this.holders.set(index, replica);
  }

  release(replica: string) {
    for (const index of this.heldBy(replica)) this.holders.delete(index);
  }

  heldBy(replica: string): number[] {
    return this.indices.filter((index) => this.holders.get(index) === replica);
  }
}
