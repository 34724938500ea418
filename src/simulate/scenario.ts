import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { parseClusterFile } from '../cluster/sim/cluster-file.ts';
import { ProfileSchema } from '../contracts/schemas/models.ts';
import { ResourcesSchema } from '../contracts/schemas/resources.ts';
import type { ClusterNode } from '../domain/cluster.ts';
import type { Measurement, Model } from '../domain/model.ts';
import type { Quota } from '../domain/quota.ts';
import { parseScopeKey, type Scope, type ScopeKey } from '../domain/scope.ts';
import { DEFAULT_POLICY_SETTINGS, type PolicySettings } from '../domain/snapshot.ts';

const ScopeKeySchema = z
  .string()
  .refine((key) => parseScopeKey(key) !== null, { error: 'must be org:ID, team:ID or project:ID' });

/** A model as `llmgw ctl model apply` takes it, with its owner given as a scope key. */
const ModelDocSchema = z.strictObject({
  name: z.string().min(1),
  owner: ScopeKeySchema.nullable().default(null),
  priority: z.number().int().default(0),
  min_replicas: z.number().int().min(0),
  max_replicas: z.number().int().min(1),
  profiles: z.array(ProfileSchema).min(1),
});

const ScenarioSchema = z.strictObject({
  /** The sim cluster YAML, relative to the scenario file. */
  cluster: z.string(),
  /** `ctl model apply` documents, relative to the scenario file. */
  models: z.string(),
  tenancy: z
    .strictObject({
      scopes: z.array(
        z.strictObject({
          key: ScopeKeySchema,
          name: z.string(),
          parent: ScopeKeySchema.nullable().default(null),
        }),
      ),
      quotas: z.array(
        z.strictObject({
          scope: ScopeKeySchema,
          guarantee: ResourcesSchema.optional(),
          limit: ResourcesSchema.optional(),
        }),
      ),
    })
    .default({ scopes: [], quotas: [] }),
  /** What `llmgw ctl bench` stored for each profile, and its prefill rate (which the bench does not store). */
  measurements: z.array(
    z.strictObject({
      model: z.string(),
      profile: z.string(),
      max_concurrency_at_slo: z.number().int().min(1),
      throughput_tok_per_sec: z.number().positive(),
      prefill_tok_per_sec: z.number().positive(),
    }),
  ),
  /** Each model's trace, relative to the data folder. */
  traces: z.record(z.string(), z.string()),
  /** Per model: its trace's requests in the run's first this many seconds are left out (it is idle then). */
  idle_first_s: z.record(z.string(), z.number().min(0)).default({}),
  /** Model load time: from a replica's start to ready. */
  start_delay_s: z.number().min(0).default(60),
  /** How long a draining replica holds its room (LLMGW_DRAIN_GRACE_S). */
  drain_grace_s: z.number().min(0).default(30),
  /** The reconciler's resync period (LLMGW_RESYNC_S). */
  resync_s: z.number().positive().default(30),
  scale_down_window_s: z
    .number()
    .min(0)
    .default(DEFAULT_POLICY_SETTINGS.scaleDownWindowMs / 1000),
  load_stale_s: z
    .number()
    .positive()
    .default(DEFAULT_POLICY_SETTINGS.loadStaleMs / 1000),
});

/** Everything a run needs but the traces' requests. */
export interface Scenario {
  name: string;
  nodes: ClusterNode[];
  models: Model[];
  scopes: Scope[];
  quotas: Quota[];
  measurements: Measurement[];
  /** Per model and profile (`model/profile`): prefill tokens per second. */
  prefillTokPerSec: Map<string, number>;
  traces: Record<string, string>;
  /** Per model: how long into the run it stays idle (its trace's earlier requests are left out). */
  idleFirstMs: Map<string, number>;
  startDelayMs: number;
  drainGraceMs: number;
  resyncMs: number;
  settings: PolicySettings;
}

function failOn<T>(parsed: z.ZodSafeParseResult<T>, source: string): T {
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new Error(`${source}: ${issue.path.join('.') || 'the file'}: ${issue.message}`);
}

function parseModels(text: string, source: string): Model[] {
  return parseAllDocuments(text)
    .filter((document) => document.contents !== null)
    .map((document, i) => {
      if (document.errors.length > 0) throw new Error(`${source}: ${document.errors[0].message}`);
      const doc = failOn(ModelDocSchema.safeParse(document.toJS()), `${source} document ${i + 1}`);
      return { ...doc, owner: doc.owner as ScopeKey | null };
    });
}

/** A scenario: its YAML, with the cluster and models files it names read beside it. */
export function readScenario(path: string): Scenario {
  const spec = failOn(ScenarioSchema.safeParse(parse(readFileSync(path, 'utf8')) ?? {}), path);
  const beside = (file: string) => join(dirname(path), file);
  const nodes = parseClusterFile(readFileSync(beside(spec.cluster), 'utf8'), beside(spec.cluster)).map(
    (node) => ({ ...node, state: 'ready' as const }),
  );
  const models = parseModels(readFileSync(beside(spec.models), 'utf8'), beside(spec.models));
  const scopes: Scope[] = spec.tenancy.scopes.map((scope) => {
    const { kind, id } = parseScopeKey(scope.key)!;
    return {
      key: scope.key as ScopeKey,
      kind,
      id,
      name: scope.name,
      parent: scope.parent as ScopeKey | null,
    };
  });
  const quotas: Quota[] = spec.tenancy.quotas.map((quota) => ({ ...quota, scope: quota.scope as ScopeKey }));
  const measurements: Measurement[] = spec.measurements.map(({ prefill_tok_per_sec: _, ...m }) => ({
    ...m,
    slo: {},
    measured_at: '1970-01-01T00:00:00.000Z',
  }));
  for (const name of Object.keys(spec.idle_first_s)) {
    if (!models.some((m) => m.name === name))
      throw new Error(`${path}: idle_first_s names no model "${name}"`);
  }
  for (const model of models) {
    if (!spec.traces[model.name]) throw new Error(`${path}: model ${model.name} has no trace`);
    if (!spec.measurements.some((m) => m.model === model.name)) {
      throw new Error(`${path}: model ${model.name} has no measurement (its service time needs one)`);
    }
  }
  return {
    name: path.replace(/^.*\//, '').replace(/\.ya?ml$/, ''),
    nodes,
    models,
    scopes,
    quotas,
    measurements,
    prefillTokPerSec: new Map(
      spec.measurements.map((m) => [`${m.model}/${m.profile}`, m.prefill_tok_per_sec]),
    ),
    traces: spec.traces,
    idleFirstMs: new Map(Object.entries(spec.idle_first_s).map(([name, s]) => [name, s * 1000])),
    startDelayMs: spec.start_delay_s * 1000,
    drainGraceMs: spec.drain_grace_s * 1000,
    resyncMs: spec.resync_s * 1000,
    settings: {
      ...DEFAULT_POLICY_SETTINGS,
      scaleDownWindowMs: spec.scale_down_window_s * 1000,
      loadStaleMs: spec.load_stale_s * 1000,
    },
  };
}
