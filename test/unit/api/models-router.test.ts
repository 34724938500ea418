// The models router in-process: input it refuses is answered with one sentence before the store or a
// reconciler is reached (they are `unreached`: reaching one would answer 500).
import { describe, it } from 'node:test';
import { modelsRouter } from '../../../src/api/routes/models/index.ts';
import { assertError } from '../../support/assertions.ts';
import { admin, routerAs, send } from './in-process.ts';

const profile = (more: object = {}) => ({ name: 'h100', resources: { gpus: 1 }, ...more });

describe('models router, before the store', () => {
  const app = routerAs(modelsRouter, admin);
  const put = (body: unknown, name = 'chat') => send(app, 'PUT', `/api/v1/models/${name}`, body);

  it('refuses a spec that fails its schema or disagrees with itself (400, one sentence)', async () => {
    const cases: [body: unknown, error: string | RegExp][] = [
      [{ profiles: [profile()] }, 'max_replicas is required'],
      [{ max_replicas: 2, colour: 'red', profiles: [profile()] }, 'unknown field "colour"'],
      [{ max_replicas: 2, profiles: [] }, 'profiles needs at least one profile'],
      [
        { min_replicas: 3, max_replicas: 2, profiles: [profile()] },
        'min_replicas (3) is above max_replicas (2)',
      ],
      [{ max_replicas: 2, profiles: [profile(), profile()] }, 'profile "h100" is given twice'],
      [
        { max_replicas: 2, profiles: [profile({ resources: {} })] },
        'profile "h100" asks for no resources; give gpus, cores or memory_gib',
      ],
      ['{"max_replicas": 2', /^the request is not valid JSON: /],
    ];
    for (const [body, error] of cases) assertError(await put(body), 400, error);
  });

  it('refuses a model name that could not be a workflow ID or a label (400)', async () => {
    assertError(
      await put({ max_replicas: 1, profiles: [profile()] }, '-chat'),
      400,
      'name must be 1 to 63 letters, digits, ".", "_" or "-", starting with a letter or digit',
    );
  });

  it('refuses a body over 256 KiB (413) and an owner that is not a scope (400)', async () => {
    assertError(
      await put(JSON.stringify({ max_replicas: 1, padding: 'x'.repeat(256 * 1024) })),
      413,
      'the body is larger than 256 KiB, the most this endpoint takes',
    );
    assertError(
      await send(app, 'POST', '/api/v1/models/chat/owner', { owner: 3 }),
      400,
      'owner must be a string',
    );
  });

  it('refuses a viewer before reading its body (403)', async () => {
    const viewer = routerAs(modelsRouter, { name: 'v', role: 'viewer', scope: null, models: null });
    assertError(
      await send(viewer, 'PUT', '/api/v1/models/chat', { max_replicas: 1, profiles: [profile()] }),
      403,
      'a viewer may not change models or their measurements: a viewer only reads',
    );
  });

  it('answers a path it lacks with 404 JSON', async () => {
    assertError(
      await send(app, 'GET', '/api/v1/models/chat/colour'),
      404,
      'there is no GET /api/v1/models/chat/colour; see /docs',
    );
  });
});
