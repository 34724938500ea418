import { NotFound } from '../domain/errors.ts';
import type { Model, Profile } from '../domain/model.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { type Db, type Sql, transaction } from './db.ts';

type ModelRow = {
  name: string;
  owner: ScopeKey | null;
  priority: number;
  min_replicas: number;
  max_replicas: number;
  target_tokens_per_sec: number | null;
  deleting: boolean;
  profiles: (Profile & {
    gpu_model: string | null;
    default_concurrency: number | null;
    engine: Profile['engine'] | null;
    runtime: string | null;
    params: Profile['params'] | null;
  })[];
};

export type StoredModel = Model & { deleting: boolean };

const toModel = (row: ModelRow): StoredModel => ({
  name: row.name,
  owner: row.owner,
  // Absent means 0, so models that never set one read as they did before priorities.
  ...(row.priority === 0 ? {} : { priority: row.priority }),
  min_replicas: row.min_replicas,
  max_replicas: row.max_replicas,
  ...(row.target_tokens_per_sec === null ? {} : { target_tokens_per_sec: row.target_tokens_per_sec }),
  deleting: row.deleting,
  profiles: row.profiles.map((p) => ({
    name: p.name,
    priority: p.priority,
    resources: p.resources,
    ...(p.gpu_model === null ? {} : { gpu_model: p.gpu_model }),
    ...(p.default_concurrency === null ? {} : { default_concurrency: p.default_concurrency }),
    ...(p.engine === null ? {} : { engine: p.engine }),
    ...(p.runtime === null ? {} : { runtime: p.runtime }),
    ...(p.params === null ? {} : { params: p.params }),
  })),
});

/** Every model with its profiles (in the order they were given), by name. */
export async function listModels(sql: Db, names?: string[]): Promise<StoredModel[]> {
  const rows = await sql<ModelRow[]>`
    select m.name, m.owner, m.priority, m.min_replicas, m.max_replicas, m.target_tokens_per_sec, m.deleting,
      coalesce((select json_agg(json_build_object('name', p.name, 'priority', p.priority, 'resources', p.resources,
        'gpu_model', p.gpu_model, 'default_concurrency', p.default_concurrency, 'engine', p.engine, 'runtime', p.runtime, 'params', p.params)
        order by p.position)
        from profiles p where p.model = m.name), '[]') as profiles
    from models m ${names ? sql`where m.name in ${sql(names)}` : sql``}
    order by m.name`;
  return rows.map(toModel);
}

export async function getModel(sql: Db, name: string): Promise<StoredModel | undefined> {
  return (await listModels(sql, [name]))[0];
}

/** The answer (404) for a model that does not exist, or that the caller may not know of. */
export const noSuchModel = (name: string) => new NotFound(`there is no model "${name}"`);

/**
 * A model as a PUT gives it. The owner and the target are also set on their own (`ctl model owner`,
 * `ctl model target --apply`), so left undefined they keep what is stored; null clears them. The
 * priority left undefined keeps what is stored too (0 for a new model), so a YAML file without it
 * does not undo one set before.
 */
export type ModelSpec = Omit<Model, 'owner' | 'target_tokens_per_sec'> & {
  owner?: ScopeKey | null;
  target_tokens_per_sec?: number | null;
};

/** Creates or replaces a model and its profiles in one transaction; true when it is new. */
export async function putModel(sql: Db, model: ModelSpec): Promise<boolean> {
  const keepOwner = model.owner === undefined;
  const keepTarget = model.target_tokens_per_sec === undefined;
  const keepPriority = model.priority === undefined;
  return transaction(sql, async (tx) => {
    const [row] = await tx<{ created: boolean }[]>`
      insert into models (name, owner, priority, min_replicas, max_replicas, target_tokens_per_sec)
      values (${model.name}, ${model.owner ?? null}, ${model.priority ?? 0}, ${model.min_replicas}, ${model.max_replicas}, ${model.target_tokens_per_sec ?? null})
      on conflict (name) do update set
        owner = case when ${keepOwner} then models.owner else excluded.owner end,
        priority = case when ${keepPriority} then models.priority else excluded.priority end,
        min_replicas = excluded.min_replicas, max_replicas = excluded.max_replicas,
        target_tokens_per_sec = case when ${keepTarget} then models.target_tokens_per_sec
          else excluded.target_tokens_per_sec end,
        deleting = false, updated_at = now()
      returning (xmax = 0) as created`;
    await tx`delete from profiles where model = ${model.name}`;
    for (const [position, p] of model.profiles.entries()) {
      await tx`
        insert into profiles (model, name, priority, resources, gpu_model, default_concurrency, engine, runtime,
          params, position)
        values (${model.name}, ${p.name}, ${p.priority}, ${tx.json(p.resources)}, ${p.gpu_model ?? null},
          ${p.default_concurrency ?? null}, ${p.engine ? tx.json(p.engine as never) : null}, ${p.runtime ?? null},
          ${p.params ? tx.json(p.params) : null}, ${position})`;
    }
    return row.created;
  });
}

/** Sets or clears the owner; false when there is no such model. */
export async function setOwner(sql: Db, name: string, owner: ScopeKey | null): Promise<boolean> {
  const rows =
    await sql`update models set owner = ${owner}, updated_at = now() where name = ${name} returning name`;
  return rows.length > 0;
}

/** Sets or clears (null) the target throughput; false when there is no such model. */
export async function setTarget(sql: Db, name: string, tokensPerSec: number | null): Promise<boolean> {
  const rows = await sql`
    update models set target_tokens_per_sec = ${tokensPerSec}, updated_at = now() where name = ${name} returning name`;
  return rows.length > 0;
}

/** Marks the model for removal: its reconciler drains its replicas, then removes it. */
export async function markDeleting(sql: Db, name: string): Promise<boolean> {
  const rows =
    await sql`update models set deleting = true, updated_at = now() where name = ${name} returning name`;
  return rows.length > 0;
}

/**
 * Removes a model whose replicas have all stopped, and their rows: a model created again under the name
 * starts with none of the old one's replicas (nor its failed starts in its backoff). False while some
 * still hold room.
 */
export async function removeModel(sql: Db, name: string): Promise<boolean> {
  return transaction(sql, async (tx) => {
    const [active] =
      await tx`select 1 from replicas where model = ${name} and state not in ('stopped', 'failed', 'crashed', 'lost') limit 1`;
    if (active) return false;
    await tx`delete from models where name = ${name}`;
    await tx`delete from replicas where model = ${name}`;
    await tx`delete from load_reports where model = ${name}`;
    return true;
  });
}

/** Models owned by any of these scopes. */
export async function modelsOwnedBy(sql: Sql, owners: ScopeKey[]): Promise<string[]> {
  if (owners.length === 0) return [];
  const rows = await sql<
    { name: string }[]
  >`select name from models where owner in ${sql(owners)} order by name`;
  return rows.map((row) => row.name);
}

/** The names of all models, those being deleted too (their reconcilers drain them). */
export async function modelNames(sql: Sql): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`select name from models order by name`;
  return rows.map((row) => row.name);
}
