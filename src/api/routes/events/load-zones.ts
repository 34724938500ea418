import type { ScopeKey } from '../../../domain/scope.ts';
import type { PolicySettings } from '../../../domain/snapshot.ts';
import { loadOf } from '../../../policy/load.ts';
import { type LoadZone, loadZone } from '../../../policy/load-zone.ts';
import { modelFigures } from '../../../policy/model-figures.ts';
import { buildView } from '../../../policy/view.ts';
import type { Sql } from '../../../store/db.ts';
import { readSnapshot } from '../../../store/snapshot.ts';

export interface ZoneOfModel {
  model: string;
  owner: ScopeKey | null;
  zone: LoadZone;
  in_flight: number;
  capacity_at_slo: number;
}

/** Every model's load zone now, weighed as the load endpoint weighs it (reconcilers/load-signals.ts). */
export async function loadZones(sql: Sql, now: number, settings: PolicySettings): Promise<ZoneOfModel[]> {
  const view = buildView(await readSnapshot(sql, now, settings));
  return [...view.models.values()].map((model) => {
    const figures = modelFigures(view, model);
    const inFlight = loadOf(view, model.name).inFlight ?? 0;
    return {
      model: model.name,
      owner: model.owner,
      zone: loadZone(inFlight, figures.serving.map(figures.concurrency)),
      in_flight: inFlight,
      capacity_at_slo: figures.capacity,
    };
  });
}
