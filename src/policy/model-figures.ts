import { type Replica, SERVING_STATES } from '../domain/cluster.ts';
import type { Measurement, Model, Profile } from '../domain/model.ts';
import type { PolicySettings } from '../domain/snapshot.ts';
import { concurrencyOf, orderProfiles } from './profiles.ts';
import type { View } from './view.ts';

/** What a model runs and serves now, as its reconciler weighs it. */
export interface ModelFigures {
  /** Its profiles in trial order. */
  profiles: Profile[];
  /** Pending, starting and ready replicas, oldest first. */
  serving: Replica[];
  /** Those whose capacity is not known yet (pending or starting). */
  settling: Replica[];
  /** C: the sum of the serving replicas' concurrency at SLO. */
  capacity: number;
  /** Measured throughput of the serving replicas (an unmeasured profile adds none). */
  tokensPerSec: number;
  concurrency(replica: Replica): number;
  throughput(replica: Replica): number;
}

export function modelFigures(view: View, model: Model): ModelFigures {
  return figuresOfRows(
    model,
    view.replicasOfModel(model.name),
    view.measurementsOf(model.name),
    view.settings,
  );
}

/**
 * modelFigures on the model's own rows: its active replicas (oldest first, as a view orders them) and
 * its measurements by profile. What a load report is weighed on needs no view of the whole store.
 */
export function figuresOfRows(
  model: Model,
  replicas: readonly Replica[],
  measurements: ReadonlyMap<string, Measurement>,
  settings: PolicySettings,
): ModelFigures {
  const byName = new Map(model.profiles.map((p) => [p.name, p]));
  const concurrency = (r: Replica) =>
    concurrencyOf(byName.get(r.profile), measurements.get(r.profile), settings);
  const throughput = (r: Replica) => measurements.get(r.profile)?.throughput_tok_per_sec ?? 0;
  const serving = replicas.filter((r) => SERVING_STATES.includes(r.state));
  return {
    profiles: orderProfiles(model, measurements),
    serving,
    settling: serving.filter((r) => r.state !== 'ready'),
    capacity: serving.reduce((total, r) => total + concurrency(r), 0),
    tokensPerSec: serving.reduce((total, r) => total + throughput(r), 0),
    concurrency,
    throughput,
  };
}
