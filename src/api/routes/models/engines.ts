import { isDeepStrictEqual } from 'node:util';
import type { Context } from 'hono';
import { identityOf } from '../../../auth/guard.ts';
import { ApiError } from '../../../contracts/errors.ts';
import { type Identity, may } from '../../../contracts/permissions.ts';
import { HIDDEN } from '../../../contracts/schemas/runtime.ts';
import type { Profile } from '../../../domain/model.ts';
import { checkParams } from '../../../domain/runtime-params.ts';
import type { Db } from '../../../store/db.ts';
import { listRuntimes } from '../../../store/runtimes.ts';

// What runs on nodes for a model's profiles (issue 30): a runtime an admin defined, with parameters its
// rules accept, or an inline engine, which only an admin writes. An inline engine stored before (by an
// admin, or before runtimes) may be kept as it is by whoever may change the model.

type ProfileInput = Pick<Profile, 'name' | 'engine' | 'runtime' | 'params'>;

/**
 * The profiles to store: refuses (400) a profile whose runtime is missing or whose parameters its
 * runtime refuses, and (403) an inline engine the caller may not write: one that is not the profile's
 * stored engine as it is (hidden values standing for the stored ones, which are what is kept).
 * Called in the change's transaction: the runtimes named are locked against deletion until it commits.
 */
export async function profilesToStore<P extends ProfileInput>(
  c: Context,
  tx: Db,
  given: readonly P[],
  stored: readonly ProfileInput[] = [],
): Promise<P[]> {
  const named = [...new Set(given.flatMap((p) => (p.runtime ? [p.runtime] : [])))];
  const runtimes = new Map((await listRuntimes(tx, named, { lock: true })).map((r) => [r.name, r]));
  const who = identityOf(c);
  const kept: P[] = [];
  for (const profile of given) {
    kept.push(profile);
    if (profile.runtime !== undefined && profile.engine !== undefined)
      throw new ApiError(400, `profile "${profile.name}" gives both a runtime and an engine; give one`);
    if (profile.params !== undefined && profile.runtime === undefined)
      throw new ApiError(400, `profile "${profile.name}" gives params but names no runtime`);
    if (profile.runtime !== undefined) {
      const runtime = runtimes.get(profile.runtime);
      if (!runtime)
        throw new ApiError(
          400,
          `profile "${profile.name}" names runtime "${profile.runtime}", which does not exist`,
        );
      const checked = checkParams(profile.runtime, runtime, profile.params);
      if (!checked.ok) throw new ApiError(400, `profile "${profile.name}": ${checked.why}`);
    }
    if (profile.engine !== undefined && !may(who, 'write-engine').allowed) {
      const before = stored.find((p) => p.name === profile.name)?.engine;
      if (!before || !isDeepStrictEqual(withHiddenKept(profile.engine, before), before)) {
        const refusal = may(who, 'write-engine', undefined, (await c.get('scopeTree')()).label);
        const caller = 'why' in refusal ? refusal.why.replace(/: .*$/, '') : '';
        throw new ApiError(
          403,
          `${caller} (profile "${profile.name}", engine.${changedField(profile.engine, before)}): ` +
            'only an admin may; name a runtime instead (GET /api/v1/runtimes lists them)',
        );
      }
      kept[kept.length - 1] = { ...profile, engine: before };
    }
  }
  return kept;
}

type Engine = NonNullable<Profile['engine']>;

/** The given engine with each hidden env value (as a non-admin reads it) standing for the stored one. */
function withHiddenKept(engine: Engine, before: Engine): Engine {
  const env = engine.env as Record<string, string> | undefined;
  const stored = (before.env ?? {}) as Record<string, string>;
  if (!env) return engine;
  return {
    ...engine,
    env: Object.fromEntries(
      Object.entries(env).map(([name, value]) => [name, value === HIDDEN ? stored[name] : value]),
    ),
  };
}

/** The field an inline engine sets that the stored one does not: the most telling first. */
function changedField(engine: Engine, before: Engine | undefined): string {
  const fields = ['argv', 'args', 'env', 'model', 'kind', ...Object.keys(engine)];
  return (
    fields.find((field) => field in engine && !isDeepStrictEqual(engine[field], before?.[field])) ?? 'kind'
  );
}

/** Profiles as `who` may read them: the values of an inline engine's variables are an admin's to read. */
export function profilesShown(profiles: Profile[], who: Identity): Profile[] {
  if (may(who, 'write-engine').allowed) return profiles;
  return profiles.map((profile) => {
    const env = profile.engine?.env as Record<string, string> | undefined;
    if (!profile.engine || !env) return profile;
    const hidden = Object.fromEntries(Object.keys(env).map((name) => [name, HIDDEN]));
    return { ...profile, engine: { ...profile.engine, env: hidden } };
  });
}

/** Where a profile still runs an inline engine: it stays as an admin (or the store before runtimes) wrote it. */
export const inlineEngineWarnings = (profiles: readonly ProfileInput[]): string[] =>
  profiles
    .filter((profile) => profile.engine !== undefined)
    .map(
      (profile) =>
        `profile "${profile.name}" runs an inline ${profile.engine?.kind} engine, which only an admin may change; ` +
        'an admin may define a runtime for it and name that instead',
    );
