import type { Measurement, Model, Profile } from '../domain/model.ts';
import type { PolicySettings } from '../domain/snapshot.ts';

/**
 * Measured tokens/s per unit of the profile's scarce resource: per GPU for GPU profiles, per core for
 * CPU-only ones (per replica when it sets neither). The two kinds are compared as these figures are.
 */
function tokensPerUnit(profile: Profile, measurement: Measurement): number {
  const unit = (profile.resources.gpus ?? 0) > 0 ? profile.resources.gpus! : (profile.resources.cores ?? 0);
  return unit > 0 ? measurement.throughput_tok_per_sec / unit : measurement.throughput_tok_per_sec;
}

/**
 * Whether the profile was measured as unable to meet its SLO at any concurrency: one replica of it
 * serves nothing within the SLO, so it adds no capacity and is never placed (a store may still hold
 * such a measurement from before the API refused them).
 */
export const cannotMeetSlo = (measurement: Measurement | undefined): boolean =>
  measurement !== undefined && measurement.max_concurrency_at_slo <= 0;

/**
 * The model's profiles in the order they are tried (POLICY.md "Choosing a profile"):
 * 1. a profile measured as unable to meet its SLO last, whatever its priority (it is never placed);
 * 2. priority, higher first;
 * 3. measured before unmeasured;
 * 4. measured tokens/s per GPU (GPU profiles) or per core (CPU-only profiles), higher first;
 * 5. name.
 */
export function orderProfiles(model: Model, measurements: ReadonlyMap<string, Measurement>): Profile[] {
  return [...model.profiles].sort((a, b) => {
    const ma = measurements.get(a.name);
    const mb = measurements.get(b.name);
    if (cannotMeetSlo(ma) !== cannotMeetSlo(mb)) return cannotMeetSlo(ma) ? 1 : -1;
    if (a.priority !== b.priority) return b.priority - a.priority;
    if (!ma !== !mb) return ma ? -1 : 1;
    if (ma && mb) {
      const perUnit = tokensPerUnit(b, mb) - tokensPerUnit(a, ma);
      if (perUnit !== 0) return perUnit;
    }
    return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
}

/**
 * In-flight requests one replica of the profile serves at its SLO: measured, else declared, else the
 * configured default. A profile no longer in the model's spec (its replicas still run) gets the same.
 */
export const concurrencyOf = (
  profile: Profile | undefined,
  measurement: Measurement | undefined,
  settings: Pick<PolicySettings, 'defaultConcurrency'>,
): number =>
  measurement?.max_concurrency_at_slo ?? profile?.default_concurrency ?? settings.defaultConcurrency;

/** The profile of the model's next replica as a preview reads it: the first in trial order. */
export const nextProfile = (
  model: Model,
  measurements: ReadonlyMap<string, Measurement>,
): Profile | undefined => orderProfiles(model, measurements)[0];
