import { type ScopeTree, scopeTree } from '../auth/guard.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { DEFAULT_POLICY_SETTINGS, type PolicySettings } from '../domain/snapshot.ts';
import { concurrencyOf } from '../policy/profiles.ts';
import type { Sql } from '../store/db.ts';
import { listMeasurements } from '../store/measurements.ts';
import { listModels, type StoredModel } from '../store/models.ts';
import { listReplicas } from '../store/replicas.ts';
import { listScopes } from '../store/tenancy.ts';

/**
 * The channel the store's writes of what the table shows notify (migration 024_routes_notify.sql): a
 * replica that became ready gets requests as soon as the table has read it again, some milliseconds.
 */
export const ROUTES_CHANNEL = 'llmgw_routes';

/**
 * How often the table is read again though no notification came: one lost (its listening connection
 * lost and made again meanwhile) is made up for within this.
 */
export const ROUTES_SAFETY_READ_MS = 15_000;

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
 * Where each model's requests may go, read from the store when it notifies a change (ROUTES_CHANNEL),
 * and every ROUTES_SAFETY_READ_MS in case: one read of the models, scopes and ready replicas for all
 * requests, instead of reads per request. A read every 500 ms instead (about 2.5 ms of CPU each, in
 * postgres.js mostly) cost each gateway process some 2% of its CPU under load, and made new Upstream
 * objects each time (their parsed addresses with them).
 */
export class RoutingTable {
  private routes = new Map<string, Route>();
  private tree: ScopeTree = scopeTree([]);
  /** When the latest read began: what was stored before then, it sees. */
  private readStartedAt = Number.NEGATIVE_INFINITY;
  private reading?: Promise<void>;
  /** A change was notified during the read under way, which may have begun before it: read again. */
  private stale = false;
  private running = false;
  private timer?: NodeJS.Timeout;
  private unlisten?: () => Promise<void>;
  /** Which registration on ROUTES_CHANNEL acts (listen()). */
  private generation = 0;
  /** Each replica's Upstream as last read, kept while unchanged (upstream-attempt.ts keys on it). */
  private upstreams = new Map<string, Upstream>();
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly sql: Sql,
    private readonly log: Pick<Console, 'warn'> = console,
    private readonly now: () => number = Date.now,
    private readonly settings: Pick<PolicySettings, 'defaultConcurrency'> = DEFAULT_POLICY_SETTINGS,
    /** Gateway processes that share the replicas' slots (workers.ts): each gets this share of them. */
    private readonly slotShare = 1,
    private readonly safetyReadMs = ROUTES_SAFETY_READ_MS,
  ) {}

  /** Reads the table, then keeps it fresh until stop(). */
  async start(): Promise<void> {
    this.running = true;
    // Listening first: a change made while the first read is under way is notified.
    await this.listen();
    await this.refresh();
    this.timer = setInterval(() => void this.safetyRead(), this.safetyReadMs);
    this.timer.unref();
  }

  stop() {
    this.running = false;
    clearInterval(this.timer);
    void this.unlisten?.().catch(() => {});
    this.unlisten = undefined;
  }

  /**
   * The model's route, read again first when the table does not know it (it may be new): by a read that
   * began after this request did, since one under way may have begun before the model was stored.
   * Requests that miss meanwhile share that read: the store sees one at a time, however many ask.
   */
  route(name: string): Route | undefined | Promise<Route | undefined> {
    // Known: at once, with no promise (nearly every request).
    return this.routes.get(name) ?? this.readRoute(name, this.now());
  }

  private async readRoute(name: string, asked: number): Promise<Route | undefined> {
    await this.reading;
    if (this.readStartedAt <= asked) await this.refresh();
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
    // A read that has hung past a safety read's interval (a connection the store never answers on) is
    // left behind: shared, it would keep the table as it was for good. Only the newest read applies.
    if (this.reading && this.now() - this.readStartedAt <= this.safetyReadMs) return this.reading;
    const reading = this.read().finally(() => {
      if (this.reading !== reading) return;
      this.reading = undefined;
      if (this.stale) this.changed();
    });
    this.reading = reading;
    return reading;
  }

  /**
   * The store notified a change, or the listening connection was made (again, after one lost: what it
   * missed meanwhile is read now). Notifications while a read is under way make one read after it.
   */
  private changed() {
    if (!this.running) return;
    if (this.reading) {
      this.stale = true;
      return;
    }
    this.stale = false;
    this.refresh().catch((error) => this.log.warn(`gateway: could not read the routes: ${String(error)}`));
  }

  /**
   * Listens on ROUTES_CHANNEL, again at each safety read: postgres.js listens again by itself after a
   * lost connection, but drops the listener if that fails (the store still down) and does not try again.
   * While the channel is listened on, registering again costs no query. Only the latest registration
   * acts: one that postgres.js made again after a lost connection cannot be unregistered (its handle is
   * postgres.js's own), and stays, inert.
   */
  private async listen() {
    // Its generation once registered: a try the store refused takes none, so the registration before it
    // (which postgres.js may yet make again by itself) keeps acting. Until then, its own first
    // onlisten is passed over: start() and safetyRead() read after listening anyway.
    let generation = -1;
    const notified = () => {
      if (generation === this.generation) this.changed();
    };
    const previous = this.unlisten;
    const { unlisten } = await this.sql.listen(ROUTES_CHANNEL, notified, notified);
    if (!this.running) return unlisten();
    generation = ++this.generation;
    this.unlisten = unlisten;
    await previous?.();
  }

  private async safetyRead() {
    try {
      await this.listen();
    } catch (error) {
      this.log.warn(`gateway: could not listen for changes of the routes: ${String(error)}`);
    }
    await this.refresh().catch((error) =>
      this.log.warn(`gateway: could not read the routes: ${String(error)}`),
    );
  }

  private async read() {
    this.readStartedAt = this.now();
    const started = this.readStartedAt;
    const [models, scopes, ready, measured] = await Promise.all([
      listModels(this.sql),
      listScopes(this.sql),
      listReplicas(this.sql, { state: 'ready' }),
      listMeasurements(this.sql),
    ]);
    if (started !== this.readStartedAt) return; // a newer read began: this one was left behind
    const tree = scopeTree(scopes);
    const byName = new Map(models.map((model) => [model.name, model]));
    const measurements = new Map(measured.map((m) => [`${m.model}/${m.profile}`, m]));
    const replicas = new Map<string, Upstream[]>();
    const upstreams = new Map<string, Upstream>();
    for (const replica of ready) {
      if (!replica.endpoint) continue;
      const list = replicas.get(replica.model) ?? [];
      const profile = byName.get(replica.model)?.profiles.find((p) => p.name === replica.profile);
      const measurement = measurements.get(`${replica.model}/${replica.profile}`);
      const concurrency = concurrencyOf(profile, measurement, this.settings);
      const slots =
        concurrency === undefined ? undefined : Math.max(1, Math.ceil(concurrency / this.slotShare));
      const known = this.upstreams.get(replica.id);
      const upstream =
        known?.endpoint === replica.endpoint && known.slots === slots
          ? known
          : { id: replica.id, endpoint: replica.endpoint, slots };
      upstreams.set(replica.id, upstream);
      list.push(upstream);
      replicas.set(replica.model, list);
    }
    this.upstreams = upstreams;
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
