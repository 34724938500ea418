import { parseArgs } from 'node:util';
import { SIM_DEFAULTS, seedOf, startSimEngine } from '../cluster/sim/engine.ts';

export const SIM_ENGINE_USAGE = `usage: llmgw sim-engine --port PORT [--host ADDRESS] [--model NAME] [--replica ID] [--max-batch N]
                        [--base-tpot-ms MS] [--tpot-growth-ms MS] [--fail-start]

The simulated engine (src/cluster/sim/engine.ts) as a process of its own, on ADDRESS:PORT (default 127.0.0.1): what the
agent runs for a profile whose engine is {"kind": "sim"}. --replica seeds its jitter; --fail-start
makes it exit 1 at once, as an engine that cannot start. SIGTERM or SIGINT stop it.`;

/** A flag's number, or a sentence naming the flag. */
function numberOf(flag: string, text: string | undefined, fallback: number, whole = false): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0 || (whole && !Number.isInteger(value))) {
    throw new Error(`--${flag} must be ${whole ? 'a whole number' : 'a number'} >= 0, not "${text}"`);
  }
  return value;
}

/** The flags, or node's sentence for an unknown or valueless one, without its advice on positionals. */
function parseFlags(args: string[]) {
  try {
    return parseArgs({
      args,
      options: {
        port: { type: 'string' },
        host: { type: 'string', default: '127.0.0.1' },
        model: { type: 'string', default: 'sim' },
        replica: { type: 'string', default: 'sim' },
        'max-batch': { type: 'string' },
        'base-tpot-ms': { type: 'string' },
        'tpot-growth-ms': { type: 'string' },
        'fail-start': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new Error(`sim-engine: ${(error as Error).message.split('. ')[0]}`);
  }
}

/** `llmgw sim-engine`: serves until it is told to stop; its own lines go to stdout (the agent's log file). */
export async function runSimEngine(args: string[]): Promise<void> {
  const { values } = parseFlags(args);
  if (values.help) {
    console.info(SIM_ENGINE_USAGE);
    return;
  }
  if (values.port === undefined) throw new Error(`sim-engine needs --port\n\n${SIM_ENGINE_USAGE}`);
  const port = numberOf('port', values.port, 0, true);
  if (values['fail-start']) {
    console.error('the simulated engine failed to start (its profile says fail_start)');
    process.exit(1);
  }
  const engine = await startSimEngine({
    port,
    host: values.host,
    model: values.model,
    seed: seedOf(values.replica),
    maxBatch: Math.max(1, numberOf('max-batch', values['max-batch'], SIM_DEFAULTS.maxBatch, true)),
    baseTpotMs: numberOf('base-tpot-ms', values['base-tpot-ms'], SIM_DEFAULTS.baseTpotMs),
    tpotGrowthMs: numberOf('tpot-growth-ms', values['tpot-growth-ms'], SIM_DEFAULTS.tpotGrowthMs),
    jitter: 0.1,
  });
  console.info(`simulated engine for ${values.model} (replica ${values.replica}) on ${engine.url}`);
  // Not main.ts's onStopSignal: an engine outlives the agent that started it, so a new parent is no reason to stop.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.info(`${signal}: stopping`);
      engine.stop().then(() => process.exit(0));
    });
  }
}
