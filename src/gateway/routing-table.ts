import { type ScopeTree, scopeTree } from '../auth/guard.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { DEFAULT_POLICY_SETTINGS, type PolicySettings } from '../domain/snapshot.ts';
import { concurrencyOf } from '../policy/profiles.ts';
import type { Sql } from '../store/db.ts';
import { listMeasurements } from '../store/measurements.ts';
import { listModels, type StoredModel } from '../store/models.ts';
import { listReplicas } from '../store/replicas.ts';
import { listScopes } from '../store/tenancy.ts';

/** How often the table is read again: a replica that became ready gets requests within this. */
export const ROUTES_REFRESH_MS = 500;

/** A ready replica that serves requests at `endpoint` (the OpenAI API's base URL, ending in /v1). */
export interface Upstream {
  id: string;
  endpoint: string;
  /**
   * The requests it serves at once at its SLO (its profile's measured concurrency, else the declared
   * one, else the default): the gateway sends it no more, and holds the rest for the next free slot.
   * Absent: no bound.
   */
  slots?: number;
}

export interface Route {
  model: StoredModel;
  /** The owner's scope, then its parents: who may call the model is decided on this chain. */
  chain: readonly ScopeKey[];
  /** Ready replicas with an endpoint; starting and draining ones are not here. */
  replicas: readonly Upstream[];
}

/**
 * Where each model's requests may go, read from the store every ROUTES_REFRESH_MS: one read of the
 * models, scopes and ready replicas for all requests, instead of reads per request.
 */
export class RoutingTable {
  private routes = new Map<string, Route>();
  private tree: ScopeTree = scopeTree([]);
  /** When the latest read began: what was stored before then, it sees. */
  private readStartedAt = Number.NEGATIVE_INFINITY;
  private reading?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly sql: Sql,
    private readonly log: Pick<Console, 'warn'> = console,
    private readonly now: () => number = Date.now,
    private readonly settings: Pick<PolicySettings, 'defaultConcurrency'> = DEFAULT_POLICY_SETTINGS,
    /** Gateway processes that share the replicas' slots (workers.ts): each gets this share of them. */
    private readonly slotShare = 1,
  ) {}

  /** Reads the table, then keeps it fresh until stop(). */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => {
      this.refresh().catch((error) => this.log.warn(`gateway: could not read the routes: ${String(error)}`));
    }, ROUTES_REFRESH_MS);
    this.timer.unref();
  }

  stop() {
    clearInterval(this.timer);
  }

  /**
   * The model's route, read again first when the table does not know it (it may be new): by a read that
   * began after this request did, since one under way may have begun before the model was stored.
   * Requests that miss meanwhile share that read: the store sees one at a time, however many ask.
   */
  async route(name: string): Promise<Route | undefined> {
    const asked = this.now();
    if (!this.routes.has(name)) {
      await this.reading;
      if (this.readStartedAt <= asked) await this.refresh();
    }
    return this.routes.get(name);
  }

  /** The model's route as last read. */
  current(name: string): Route | undefined {
    return this.routes.get(name);
  }

  /** Every model's route. */
  all(): Route[] {
    return [...this.routes.values()];
  }

  /** How sentences name a scope. */
  label(key: ScopeKey): string {
    return this.tree.label(key);
  }

  /** Calls `listener` after each read of the table, until the returned function is called. */
  onRefresh(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** One read at a time: callers that ask during a read share it. */
  refresh(): Promise<void> {
    this.reading ??= this.read().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private async read() {
    this.readStartedAt = this.now();
    const [models, scopes, ready, measured] = await Promise.all([
      listModels(this.sql),
      listScopes(this.sql),
      listReplicas(this.sql, { state: 'ready' }),
      listMeasurements(this.sql),
    ]);
    const tree = scopeTree(scopes);
    const byName = new Map(models.map((model) => [model.name, model]));
    const measurements = new Map(measured.map((m) => [`${m.model}/${m.profile}`, m]));
    const replicas = new Map<string, Upstream[]>();
    for (const replica of ready) {
      if (!replica.endpoint) continue;
      const list = replicas.get(replica.model) ?? [];
      const profile = byName.get(replica.model)?.profiles.find((p) => p.name === replica.profile);
      const measurement = measurements.get(`${replica.model}/${replica.profile}`);
      const slots = concurrencyOf(profile, measurement, this.settings);
      list.push({
        id: replica.id,
        endpoint: replica.endpoint,
        slots: slots === undefined ? undefined : Math.max(1, Math.ceil(slots / this.slotShare)),
      });
      replicas.set(replica.model, list);
    }
    this.tree = tree;
    this.routes = new Map(
      models
        .filter((model) => !model.deleting)
        .map((model) => [
          model.name,
          { model, chain: tree.chain(model.owner), replicas: replicas.get(model.name) ?? [] },
        ]),
    );
    for (const listener of this.listeners) listener();
  }
}
