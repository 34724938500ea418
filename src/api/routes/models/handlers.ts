import type { RouteHandler, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { authorize, identityOf, visibility } from '../../../auth/guard.ts';
import { ApiError } from '../../../contracts/errors.ts';
import type { ScopeKey } from '../../../domain/scope.ts';
import { ownerWarnings } from '../../../policy/owner-warnings.ts';
import { isEmpty } from '../../../policy/resources.ts';
import { listDecisions } from '../../../store/decisions.ts';
import {
  getModel,
  type ModelSpec,
  markDeleting,
  noSuchModel,
  putModel,
  setOwner,
} from '../../../store/models.ts';
import { readSnapshot } from '../../../store/snapshot.ts';
import { decisionsShown } from '../../decisions-shown.ts';
import type { ApiDeps } from '../../deps.ts';
import { modelInView, modelToChange } from '../../model-in-view.ts';
import { modelChange, recordedChange } from '../../recorded.ts';
import { refuseBeyondScopeCap } from '../../scope-caps.ts';
import { resolveOrRefuse } from '../../scopes.ts';
import { inlineEngineWarnings, profilesShown, profilesToStore } from './engines.ts';
import { modelSummaries } from './read-model.ts';
import type {
  deleteModelRoute,
  getModelRoute,
  listModelsRoute,
  ModelDetailSchema,
  ModelInputSchema,
  putModelRoute,
  setOwnerRoute,
} from './routes.ts';

/** What each route of models does, over the store and reconcilers of `deps`. */
export function modelHandlers(deps: ApiDeps) {
  const { sql } = deps;
  const now = deps.now ?? Date.now;

  const put: RouteHandler<typeof putModelRoute> = async (c) => {
    const { name } = c.req.valid('param');
    const input = c.req.valid('json');
    refuseInconsistentSpec(input);
    const given = input.owner === undefined ? undefined : await ownerKey(c, input.owner);
    const spec: ModelSpec = { name, ...input, owner: given };
    const { created, owner, moved } = await recordedChange(c, deps, {
      action: 'model.put',
      ...modelChange(name, 'specChanged'),
      // Decided under the model's lock: a PUT of the same name at once has committed, or waits for this.
      apply: async (tx) => {
        const existing = await modelInView(c, tx, name, 'change-model');
        // Model names are one namespace: a name taken outside the caller's view can only be refused, and
        // the refusal names nothing of its owner.
        if (!existing && (await getModel(tx, name))) {
          throw new ApiError(409, `the name "${name}" is taken by a model of another scope; choose another`);
        }
        const owner = given === undefined ? (existing?.owner ?? null) : given;
        // Both the owner it has and the one it gets must be the caller's to manage.
        if (existing) await authorize(c, 'change-model', { scope: existing.owner, model: name });
        await authorize(c, 'change-model', { scope: owner, model: name });
        if (!existing) await refuseBeyondScopeCap(c, tx, 'models', deps.scopeCaps);
        const profiles = await profilesToStore(c, tx, input.profiles, existing?.profiles);
        return {
          created: await putModel(tx, { ...spec, profiles }),
          owner,
          moved: owner !== null && owner !== existing?.owner,
        };
      },
    });
    // Moved (or created) under an owner: say when a limit there stops its next replica.
    const warnings = moved
      ? ownerWarnings(await readSnapshot(sql, now(), deps.policy), {
          name,
          owner,
          min_replicas: input.min_replicas,
          max_replicas: input.max_replicas,
          profiles: input.profiles,
        })
      : [];
    return c.json({ name, ...(warnings.length > 0 ? { warnings } : {}) }, created ? 201 : 200);
  };

  const remove: RouteHandler<typeof deleteModelRoute> = async (c) => {
    const { name } = c.req.valid('param');
    await recordedChange(c, deps, {
      action: 'model.delete',
      ...modelChange(name, 'deleted'),
      apply: async (tx) => {
        await modelToChange(c, tx, name);
        await markDeleting(tx, name);
      },
    });
    return c.json({ deleting: name }, 200);
  };

  const list: RouteHandler<typeof listModelsRoute> = async (c) => {
    const shown = await visibility(c);
    const all = await modelSummaries(sql, now(), deps.policy, await decisionsShown(c));
    // Visibility is decided on the stored key: "" stands for no owner only in answers.
    const visible = all.filter(({ owner }) => shown(owner));
    return c.json(
      visible.map(({ summary }) => summary),
      200,
    );
  };

  const get: RouteHandler<typeof getModelRoute> = async (c) => {
    const { name } = c.req.valid('param');
    const shownDecision = await decisionsShown(c);
    const [found] = await modelSummaries(sql, now(), deps.policy, shownDecision, [name]);
    // A model the caller may not see is one it is not told of.
    if (!found || !(await visibility(c))(found.owner)) throw noSuchModel(name);
    const warnings = inlineEngineWarnings(found.profiles);
    const detail = {
      ...found.summary,
      profiles: profilesShown(found.profiles, identityOf(c)),
      replicas_list: found.replicas.map((r) => ({
        ...r,
        created_at: new Date(r.created_at).toISOString(),
      })),
      decisions: (await listDecisions(sql, name, 10)).map(shownDecision),
      ...(warnings.length > 0 ? { warnings } : {}),
    };
    return c.json(detail as z.infer<typeof ModelDetailSchema>, 200);
  };

  const owner: RouteHandler<typeof setOwnerRoute> = async (c) => {
    const { name } = c.req.valid('param');
    const { owner: text = null } = c.req.valid('json');
    const key = await ownerKey(c, text);
    const model = await recordedChange(c, deps, {
      action: 'model.owner',
      ...modelChange(name, 'ownerChanged'),
      apply: async (tx) => {
        const model = await modelToChange(c, tx, name);
        await authorize(c, 'change-model', { scope: key, model: name });
        await setOwner(tx, name, key);
        return model;
      },
    });
    // Accepted even where a limit stops the model's next replica: the answer says which limit.
    const warnings = key
      ? ownerWarnings(await readSnapshot(sql, now(), deps.policy), { ...model, owner: key })
      : [];
    return c.json({ model: name, owner: key ?? '', ...(warnings.length > 0 ? { warnings } : {}) }, 200);
  };

  return { put, remove, list, get, owner };
}

/** Refuses (400) a spec whose fields disagree with each other, which its schema cannot say alone. */
function refuseInconsistentSpec(input: z.infer<typeof ModelInputSchema>) {
  if (input.min_replicas > input.max_replicas) {
    throw new ApiError(
      400,
      `min_replicas (${input.min_replicas}) is above max_replicas (${input.max_replicas})`,
    );
  }
  const names = input.profiles.map((p) => p.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new ApiError(400, `profile "${twice}" is given twice`);
  const empty = input.profiles.find((p) => isEmpty(p.resources));
  if (empty) {
    throw new ApiError(400, `profile "${empty.name}" asks for no resources; give gpus, cores or memory_gib`);
  }
}

/** The key of the scope an owner field names; null for "" or null. */
const ownerKey = async (c: Context, text: string | null): Promise<ScopeKey | null> =>
  text ? (await resolveOrRefuse(c, text)).key : null;
