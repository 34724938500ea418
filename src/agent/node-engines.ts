import { describeIssue } from '../contracts/errors.ts';
import { EngineSchema, type EngineSpec } from '../contracts/schemas/engine.ts';
import type { ReplicaToRun } from '../domain/node-work.ts';
import { resolveRuntime } from '../domain/runtime-params.ts';
import { type EngineLoad, loadGaugesOf, scrapeLoad } from './engine-metrics.ts';
import type { EngineRecord } from './engine-state.ts';
import { GpuAllocator } from './gpus.ts';
import { type EngineExit, Supervisor, type SupervisorOptions } from './supervisor.ts';

export interface NodeEnginesOptions extends Omit<SupervisorOptions, 'onExit'> {
  /** The node's GPU indices (detectCapacity's gpuIndices). */
  gpuIndices: readonly number[];
  /** Told of each engine that ended on its own, once its GPUs are free again. */
  onExit?: (exit: EngineExit) => void;
}

export type { ReplicaToRun };

/**
 * The engines of one node: what the agent's start and stop activities call. It gives each replica the
 * GPUs its profile asks for and takes them back whenever its engine ends, however it ends (stopped,
 * crashed, failed to start), so that the next replica can have them; after a restart it takes back
 * the GPUs of the engines still running before it starts any other.
 */
export class NodeEngines {
  readonly supervisor: Supervisor;
  private readonly gpus: GpuAllocator;

  constructor(options: NodeEnginesOptions) {
    const { gpuIndices, onExit, ...rest } = options;
    this.gpus = new GpuAllocator(gpuIndices);
    this.supervisor = new Supervisor({
      ...rest,
      onExit: (exit) => {
        this.gpus.release(exit.replica);
        onExit?.(exit);
      },
    });
  }

  /** Starts the replica's engine on its own GPUs, and resolves once it is ready (Supervisor.start). */
  async start({ replica, model, profile, runtime }: ReplicaToRun): Promise<EngineRecord> {
    const { engine, env, secretEnv } = engineToRun(profile, runtime);
    const gpus = this.gpus.allocate(replica, profile.resources.gpus ?? 0);
    try {
      return await this.supervisor.start({
        replica,
        model,
        engine,
        gpus,
        defaultConcurrency: profile.default_concurrency,
        env,
        secretEnv,
      });
    } catch (error) {
      // A failed start leaves no engine, unless one was already running under this replica's ID.
      if (!this.supervisor.list().some((r) => r.replica === replica)) this.gpus.release(replica);
      throw error;
    }
  }

  /** Stops the replica's engine (SIGTERM, then SIGKILL after the grace) and frees its GPUs. */
  async stop(replica: string): Promise<void> {
    await this.supervisor.stop(replica);
    this.gpus.release(replica);
  }

  /**
   * After a restart: adopts the engines still serving (Supervisor.adopt), and holds the GPUs of every
   * engine still running, silent ones too: they hold those GPUs until they are stopped.
   */
  async adopt(): Promise<Awaited<ReturnType<Supervisor['adopt']>>> {
    const found = await this.supervisor.adopt();
    for (const record of [...found.adopted, ...found.silent]) this.gpus.adopt(record.replica, record.gpus);
    return found;
  }

  /** GPUs each replica holds now, for the agent's report of its node. */
  gpusOf(replica: string): number[] {
    return this.gpus.heldBy(replica);
  }

  /**
   * Running and waiting requests of each engine whose metrics are scraped (not command engines, nor
   * sim engines with `metrics: false`), or why its scrape failed; scraped at once.
   */
  async loads(): Promise<Map<string, EngineLoad | Error>> {
    const scraped = this.supervisor
      .list()
      .map((record) => ({ record, gauges: loadGaugesOf(record.engine) }))
      .filter(({ gauges }) => gauges !== null);
    const results = await Promise.all(
      scraped.map(({ record, gauges }) =>
        scrapeLoad(record.url, gauges!).catch(
          (error: Error) => new Error(`replica ${record.replica}: ${error.message}`),
        ),
      ),
    );
    return new Map(scraped.map(({ record }, at) => [record.replica, results[at]]));
  }

  /** Stops watching (the agent is stopping); the engines keep serving. */
  close() {
    this.supervisor.close();
  }
}

/**
 * What a profile runs: its runtime filled with its parameters, checked here again (the runtime may have
 * changed since they were accepted), or its inline engine; either checked against the engines' schema.
 */
export function engineToRun(
  profile: ReplicaToRun['profile'],
  runtime: ReplicaToRun['runtime'],
): { engine: EngineSpec; env?: Record<string, string>; secretEnv?: Record<string, string> } {
  let inline = profile.engine;
  let extra: { env?: Record<string, string>; secretEnv?: Record<string, string> } = {};
  if (profile.runtime !== undefined) {
    if (runtime?.name !== profile.runtime)
      throw new Error(`profile ${profile.name} names runtime "${profile.runtime}", which does not exist`);
    const resolved = resolveRuntime(runtime.name, runtime, profile.params);
    if (!resolved.ok) throw new Error(`profile ${profile.name}: ${resolved.why}`);
    inline = resolved.resolved.engine as typeof inline;
    extra = { env: resolved.resolved.env, secretEnv: resolved.resolved.secretEnv };
  }
  if (!inline) throw new Error(`profile ${profile.name} has no engine: an agent has nothing to run`);
  // Checked again: a profile stored before engines had their schema may hold any shape.
  const checked = EngineSchema.safeParse(inline);
  if (!checked.success) {
    const [issue] = checked.error.issues;
    throw new Error(
      `profile ${profile.name}: ${describeIssue({ ...issue, path: ['engine', ...issue.path] })}`,
    );
  }
  return { engine: checked.data, ...extra };
}
