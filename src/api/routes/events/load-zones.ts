import type { ScopeKey } from '../../../domain/scope.ts';
import type { PolicySettings } from '../../../domain/snapshot.ts';
import { type LoadZone, loadStanding } from '../../../policy/load-zone.ts';
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
    const { zone, inFlight, capacity } = loadStanding(view, model);
    return { model: model.name, owner: model.owner, zone, in_flight: inFlight, capacity_at_slo: capacity };
  });
}
