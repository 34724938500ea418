// Client side, shared by the API's load endpoint and the simulated replicas: when a load report wakes a
// reconciler. Not part of the workflow bundle.
import type { Model } from '../domain/model.ts';
import type { PolicySettings } from '../domain/snapshot.ts';
import { type LoadStanding, type LoadZone, loadStandingOf, wakesReconciler } from '../policy/load-zone.ts';
import type { Sql } from '../store/db.ts';
import { putLoadReport, readLoad } from '../store/load.ts';
import { listMeasurements } from '../store/measurements.ts';
import { listReplicas } from '../store/replicas.ts';
import type { Reconcilers } from './client.ts';

/** At most this many signals a second per model from one process ("a few times a second"). */
export const MIN_SIGNAL_GAP_MS = 250;
/**
 * A report that signals nothing still makes sure the model's reconciler runs (started again if it was
 * terminated), at most once a second per model: one call to Temporal, which writes nothing when it runs.
 */
export const MIN_ENSURE_GAP_MS = 1000;

export interface LoadReceipt {
  model: string;
  in_flight: number;
  capacity_at_slo: number;
  zone: LoadZone;
  /** The report woke its reconciler: at once, or MIN_SIGNAL_GAP_MS after the last signal. */
  signalled: boolean;
}

/** What the pacer did with a load's standing: told the reconciler, held it for the gap's end, or nothing. */
export type Pacing = 'told' | 'held' | 'unchanged';

/**
 * Stores load reports and signals a model's reconciler only when its load crosses a threshold
 * (policy/load-zone.ts), or its capacity changed while it is out of the steady zone, so a busy
 * gateway does not flood the workflow's history.
 */
export class LoadSignals {
  private readonly pacer: SignalPacer;
  /** When each model's reconciler was last signalled or made sure of. */
  private readonly ensured = new Map<string, number>();

  constructor(
    private readonly sql: Sql,
    private readonly reconcilers: Reconcilers,
    private readonly settings: PolicySettings,
    private readonly now: () => number = Date.now,
    log: Pick<Console, 'warn'> = console,
  ) {
    this.pacer = new SignalPacer((model) => reconcilers.tell([model], 'loadChanged'), now, log);
  }

  /**
   * Stores a source's counts; `waitingSince`: since when its requests have waited without a break (ms
   * since epoch), when some wait and the source knows.
   */
  async report(
    model: Model,
    source: string,
    inFlight: number,
    waiting: number,
    waitingSince?: number,
  ): Promise<LoadReceipt> {
    const { sql } = this;
    const at = this.now();
    await putLoadReport(
      sql,
      model.name,
      source,
      inFlight,
      waiting,
      { now: at, staleMs: this.settings.loadStaleMs, maxSources: this.settings.loadSourcesMax },
      waitingSince,
    );
    const [replicas, measurements, load] = await Promise.all([
      listReplicas(sql, { model: model.name, activeOnly: true }),
      listMeasurements(sql, model.name),
      readLoad(sql, at, this.settings.loadStaleMs, model.name),
    ]);
    // Weighed on the model's own rows: the view of the store is built once, by the pass it may wake.
    const standing = loadStandingOf(
      model,
      { replicas, measurements, load: load[model.name] },
      at,
      this.settings,
    );
    const { zone, capacity, inFlight: total } = standing;

    const pacing = await this.pacer.weigh(model.name, standing);
    // A signal, now or held, starts a missing reconciler too (signalWithStart): no ensure is needed then.
    if (pacing !== 'unchanged') {
      this.ensured.set(model.name, at);
    } else if (at - (this.ensured.get(model.name) ?? Number.NEGATIVE_INFINITY) >= MIN_ENSURE_GAP_MS) {
      this.ensured.set(model.name, at);
      await this.reconcilers.ensure([model.name]);
    }
    return {
      model: model.name,
      in_flight: total,
      capacity_at_slo: capacity,
      zone,
      signalled: pacing !== 'unchanged',
    };
  }
}

/**
 * When a model's reconciler is told that its load's standing changed: at once, unless it was told less
 * than MIN_SIGNAL_GAP_MS ago; then once that gap has passed, with no further report needed (a gateway
 * whose counts hold sends none), unless the standing went back to what the reconciler was last told.
 */
export class SignalPacer {
  private readonly told = new Map<string, { zone: LoadZone; capacity: number; at: number }>();
  /** A change each model's reconciler is told of once the gap has passed. */
  private readonly held = new Map<string, { standing: LoadStanding; timer: NodeJS.Timeout }>();

  constructor(
    private readonly tell: (model: string) => Promise<void>,
    private readonly now: () => number = Date.now,
    private readonly log: Pick<Console, 'warn'> = console,
  ) {}

  /** Tells the reconciler now, holds the change until the gap has passed, or finds nothing to tell. */
  async weigh(model: string, standing: LoadStanding): Promise<Pacing> {
    const last = this.told.get(model);
    if (!wakesReconciler(last, standing)) {
      this.release(model);
      return 'unchanged';
    }
    const wait = last ? last.at + MIN_SIGNAL_GAP_MS - this.now() : 0;
    if (wait <= 0) {
      await this.signal(model, standing);
      return 'told';
    }
    const held = this.held.get(model);
    if (held) {
      held.standing = standing;
      return 'held';
    }
    const timer = setTimeout(() => {
      this.signal(model, this.held.get(model)?.standing ?? standing).catch((error) =>
        this.log.warn(`could not signal the reconciler of ${model} that its load changed: ${String(error)}`),
      );
    }, wait);
    timer.unref();
    this.held.set(model, { standing, timer });
    return 'held';
  }

  private async signal(model: string, { zone, capacity }: LoadStanding) {
    this.release(model);
    this.told.set(model, { zone, capacity, at: this.now() });
    await this.tell(model);
  }

  private release(model: string) {
    clearTimeout(this.held.get(model)?.timer);
    this.held.delete(model);
  }
}
