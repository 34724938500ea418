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
 * The model's profiles in the order they are tried (POLICY.md "Choosing a profile"):
 * 1. priority, higher first;
 * 2. measured before unmeasured;
 * 3. measured tokens/s per GPU (GPU profiles) or per core (CPU-only profiles), higher first;
 * 4. name.
 */
export function orderProfiles(model: Model, measurements: ReadonlyMap<string, Measurement>): Profile[] {
  return [...model.profiles].sort((a, b) => {
    if (a.priority !== b.priority) return b.priority - a.priority;
    const ma = measurements.get(a.name);
    const mb = measurements.get(b.name);
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
  settings: PolicySettings,
): number =>
  measurement?.max_concurrency_at_slo ?? profile?.default_concurrency ?? settings.defaultConcurrency;
