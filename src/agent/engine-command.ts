import { join } from 'node:path';
import { type EngineSpec, PLACEHOLDERS } from '../contracts/schemas/engine.ts';

/** What a replica's command line is made of, besides its profile's engine. */
export interface ReplicaLaunch {
  replica: string;
  /** The llmgw model's name: what clients ask for, so each engine serves under it. */
  model: string;
  port: number;
  /** The node's address (its agent token's): the engine listens there, where the gateway reaches it. */
  host: string;
  /** GPU indices of this replica alone (gpus.ts); [] hides every GPU from it. */
  gpus: readonly number[];
  /** The sim engine's batch when its profile gives none: the profile's default_concurrency. */
  defaultConcurrency?: number;
}

export interface EngineCommand {
  command: string;
  args: string[];
  /** Set in the engine's environment, over the basics childEnvironment keeps. */
  env: Record<string, string>;
}

/** The engines' own settings (Hugging Face tokens and caches, vLLM's, SGLang's, NCCL's) reach them. */
export const ENGINE_VARIABLES = /^(HF_|HUGGING_FACE_|VLLM_|SGLANG_|LLAMA_|NCCL_)/;

/** The llmgw command, run by this same node: the sim engine is `llmgw sim-engine`. */
const LLMGW_BIN = join(import.meta.dirname, '..', '..', 'bin', 'llmgw.mjs');

/**
 * The process that runs one replica, listening on the node's address and its port only (the gateway
 * reaches it there; clients reach it through the gateway). Flags, from each engine's documentation:
 * - vLLM: `vllm serve MODEL --host --port --served-model-name` (docs.vllm.ai, "vllm serve" CLI reference);
 *   /health and /metrics are always served.
 * - SGLang: `python3 -m sglang.launch_server --model-path --host --port --served-model-name`, and
 *   `--enable-metrics`, without which /metrics is absent (docs.sglang.io "Server Arguments",
 *   "Production Metrics").
 * - llama.cpp: `llama-server -m --host --port --alias`, and `--metrics` for /metrics (llama.cpp's
 *   tools/server/README.md).
 * The profile's own args come last, so that they can add what the engine takes.
 */
export function engineCommand(engine: EngineSpec, launch: ReplicaLaunch): EngineCommand {
  const port = String(launch.port);
  // CUDA numbers GPUs fastest first unless told otherwise; nvidia-smi's indices are in PCI bus order.
  const env = { CUDA_DEVICE_ORDER: 'PCI_BUS_ID', CUDA_VISIBLE_DEVICES: launch.gpus.join(',') };
  const listen = ['--host', launch.host, '--port', port];
  switch (engine.kind) {
    case 'vllm':
      return {
        command: 'vllm',
        args: ['serve', engine.model, ...listen, '--served-model-name', launch.model, ...(engine.args ?? [])],
        env,
      };
    case 'sglang':
      return {
        command: 'python3',
        args: [
          '-m',
          'sglang.launch_server',
          '--model-path',
          engine.model,
          ...listen,
          '--served-model-name',
          launch.model,
          '--enable-metrics',
          ...(engine.args ?? []),
        ],
        env,
      };
    case 'llama.cpp':
      return {
        command: 'llama-server',
        args: ['-m', engine.model, ...listen, '--alias', launch.model, '--metrics', ...(engine.args ?? [])],
        env,
      };
    case 'command': {
      const [command, ...args] = engine.argv.map((word) => fillPlaceholders(word, launch));
      const own = Object.entries(engine.env ?? {}).map(([name, value]) => [
        name,
        fillPlaceholders(value, launch),
      ]);
      return { command, args, env: { ...Object.fromEntries(own), ...env } };
    }
    case 'sim': {
      const batch = engine.max_batch ?? launch.defaultConcurrency;
      const flag = (name: string, value: number | undefined) =>
        value === undefined ? [] : [`--${name}`, String(value)];
      return {
        command: process.execPath,
        args: [
          LLMGW_BIN,
          'sim-engine',
          ...listen,
          '--model',
          launch.model,
          '--replica',
          launch.replica,
          ...flag('max-batch', batch),
          ...flag('base-tpot-ms', engine.base_tpot_ms),
          ...flag('tpot-growth-ms', engine.tpot_growth_ms),
          ...(engine.fail_start ? ['--fail-start'] : []),
        ],
        env,
      };
    }
  }
}

const PLACEHOLDER = new RegExp(`\\{(${PLACEHOLDERS.join('|')})\\}`, 'g');

/** `{port}`, `{host}`, `{model}` and `{replica}` replaced by the replica's own; the schema refused any other. */
export function fillPlaceholders(text: string, launch: ReplicaLaunch): string {
  const values: Record<(typeof PLACEHOLDERS)[number], string> = {
    port: String(launch.port),
    host: launch.host,
    model: launch.model,
    replica: launch.replica,
  };
  return text.replace(PLACEHOLDER, (_, name: keyof typeof values) => values[name]);
}
