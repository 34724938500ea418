import type { Model } from '../../domain/model.ts';
import { profileEngine } from '../../domain/runtime-params.ts';
import type { LoadSignals } from '../../reconcilers/load-signals.ts';
import type { Sql } from '../../store/db.ts';
import { deleteLoadReport } from '../../store/load.ts';
import { listModels } from '../../store/models.ts';
import { listNodes } from '../../store/nodes.ts';
import { listReplicas, setEndpoint } from '../../store/replicas.ts';
import { listRuntimes } from '../../store/runtimes.ts';
import { SIM_DEFAULTS, type SimEngine, seedOf, startSimEngine } from './engine.ts';

/** How often engines are started or stopped and replicas report their own load (an agent's scrape period). */
const SYNC_EVERY_MS = 1000;

const number = (value: unknown, fallback: number) =>
  typeof value === 'number' && value >= 0 ? value : fallback;

/**
 * The serving side of the simulated cluster: every ready or draining replica whose profile's engine is
 * `{"kind": "sim"}` runs a simulated OpenAI-compatible engine on loopback (its endpoint is stored with
 * the replica), and reports its own requests in flight as the load source `replica:<id>`. Engine
 * settings come from the profile's engine, or its sim runtime's parameters (`max_batch`, `base_tpot_ms`, `tpot_growth_ms`); the batch
 * defaults to the profile's default_concurrency; `metrics: false` makes an engine nobody scrapes, whose
 * replica reports no load (its model's load is then the gateway's alone). Engines live in this worker's
 * process: after a restart they are started again for the replicas the store says are running.
 */
export class SimServing {
  private readonly engines = new Map<string, { engine: SimEngine; model: string; scraped: boolean }>();
  private syncedAt = 0;

  constructor(
    private readonly sql: Sql,
    private readonly loadSignals: LoadSignals,
    private readonly log: Pick<Console, 'warn'> = console,
  ) {}

  /** Starts engines for running replicas, stops those of replicas that stopped, and reports load. */
  async sync(now = Date.now()): Promise<void> {
    // The cluster ticks five times a second; reading every replica that often would load the store for nothing.
    if (now - this.syncedAt < SYNC_EVERY_MS) return;
    this.syncedAt = now;
    const models = new Map((await listModels(this.sql)).map((model) => [model.name, model]));
    const runtimes = new Map((await listRuntimes(this.sql)).map((runtime) => [runtime.name, runtime]));
    const engineOf = (model: Model | undefined, name: string) => {
      const profile = model?.profiles.find((p) => p.name === name);
      return profile && profileEngine(profile, runtimes);
    };
    // An agent's node runs its engines itself.
    const simNodes = new Set(
      (await listNodes(this.sql)).filter((n) => n.driver === 'sim').map((n) => n.name),
    );
    const running = (await listReplicas(this.sql, { activeOnly: true })).filter(
      (r) =>
        simNodes.has(r.node) &&
        (r.state === 'ready' || r.state === 'draining') &&
        engineOf(models.get(r.model), r.profile)?.kind === 'sim',
    );
    const wanted = new Set(running.map((r) => r.id));
    for (const [id, { model }] of this.engines) {
      if (wanted.has(id)) continue;
      await this.engines.get(id)?.engine.stop();
      this.engines.delete(id);
      await setEndpoint(this.sql, id, null);
      await deleteLoadReport(this.sql, model, `replica:${id}`);
    }
    for (const replica of running) {
      if (this.engines.has(replica.id)) continue;
      const model = models.get(replica.model)!;
      const profile = model.profiles.find((p) => p.name === replica.profile)!;
      const settings = engineOf(model, replica.profile)!;
      const engine = await startSimEngine({
        model: model.name,
        maxBatch: number(settings.max_batch, profile.default_concurrency ?? SIM_DEFAULTS.maxBatch),
        baseTpotMs: number(settings.base_tpot_ms, SIM_DEFAULTS.baseTpotMs),
        tpotGrowthMs: number(settings.tpot_growth_ms, SIM_DEFAULTS.tpotGrowthMs),
        jitter: 0.1,
        seed: seedOf(replica.id),
      });
      this.engines.set(replica.id, { engine, model: model.name, scraped: settings.metrics !== false });
      await setEndpoint(this.sql, replica.id, `${engine.url}/v1`);
    }
    await Promise.all(
      [...this.engines]
        .filter(([, { scraped }]) => scraped)
        .map(([id, { engine, model }]) => this.report(id, engine, models.get(model))),
    );
  }

  private async report(id: string, engine: SimEngine, model: Model | undefined) {
    if (!model) return;
    try {
      const text = await (await fetch(`${engine.url}/metrics`)).text();
      const gauge = (name: string) =>
        Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
      await this.loadSignals.report(
        model,
        `replica:${id}`,
        gauge('vllm:num_requests_running'),
        gauge('vllm:num_requests_waiting'),
      );
    } catch (error) {
      this.log.warn(`sim replica ${id}: could not report its load: ${String(error)}`);
    }
  }

  async stop(): Promise<void> {
    await Promise.all([...this.engines.values()].map(({ engine }) => engine.stop()));
    this.engines.clear();
  }
}
