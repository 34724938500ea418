// Client side, shared by the API's load endpoint and the simulated replicas: when a load report wakes a
// reconciler. Not part of the workflow bundle.
import type { Model } from '../domain/model.ts';
import type { PolicySettings } from '../domain/snapshot.ts';
import { type LoadZone, loadStanding, wakesReconciler } from '../policy/load-zone.ts';
import { buildView } from '../policy/view.ts';
import type { Sql } from '../store/db.ts';
import { putLoadReport, readLoad } from '../store/load.ts';
import { listMeasurements } from '../store/measurements.ts';
import { listReplicas } from '../store/replicas.ts';
import type { Reconcilers } from './client.ts';

/** At most this many signals a second per model from one process ("a few times a second"). */
const MIN_SIGNAL_GAP_MS = 250;
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
  signalled: boolean;
}

/**
 * Stores load reports and signals a model's reconciler only when its load crosses a threshold
 * (policy/load-zone.ts), or its capacity changed while it is out of the steady zone, so a busy
 * gateway does not flood the workflow's history.
 */
export class LoadSignals {
  private readonly last = new Map<string, { zone: LoadZone; capacity: number; at: number }>();
  /** When each model's reconciler was last signalled or made sure of. */
  private readonly ensured = new Map<string, number>();

  constructor(
    private readonly sql: Sql,
    private readonly reconcilers: Reconcilers,
    private readonly settings: PolicySettings,
    private readonly now: () => number = Date.now,
  ) {}

  async report(model: Model, source: string, inFlight: number, waiting: number): Promise<LoadReceipt> {
    const { sql } = this;
    const at = this.now();
    await putLoadReport(sql, model.name, source, inFlight, waiting, {
      now: at,
      staleMs: this.settings.loadStaleMs,
      maxSources: this.settings.loadSourcesMax,
    });
    const [replicas, measurements, load] = await Promise.all([
      listReplicas(sql, { model: model.name, activeOnly: true }),
      listMeasurements(sql, model.name),
      readLoad(sql, at, this.settings.loadStaleMs, model.name),
    ]);
    const view = buildView({
      now: at,
      settings: this.settings,
      scopes: [],
      quotas: [],
      models: [model],
      nodes: [],
      replicas,
      measurements,
      load,
    });
    const standing = loadStanding(view, model);
    const { zone, capacity, inFlight: total } = standing;

    const last = this.last.get(model.name);
    const changed = wakesReconciler(last, standing);
    const signalled = changed && (!last || at - last.at >= MIN_SIGNAL_GAP_MS);
    if (signalled) {
      this.last.set(model.name, { zone, capacity, at });
      this.ensured.set(model.name, at);
      await this.reconcilers.tell([model.name], 'loadChanged');
    } else if (at - (this.ensured.get(model.name) ?? Number.NEGATIVE_INFINITY) >= MIN_ENSURE_GAP_MS) {
      this.ensured.set(model.name, at);
      await this.reconcilers.ensure([model.name]);
    }
    return { model: model.name, in_flight: total, capacity_at_slo: capacity, zone, signalled };
  }
}
