// The quotas router in-process: a body that fails its schema or its bound is refused before the store
// is reached.
import { describe, it } from 'node:test';
import { quotasRouter } from '../../../src/api/routes/quotas/index.ts';
import { assertError } from '../../support/assertions.ts';
import { admin, routerAs, send } from './in-process.ts';

describe('quotas router, before the store', () => {
  const app = routerAs(quotasRouter, admin);

  it('refuses a quota that fails its schema, on PUT and on preview alike (400)', async () => {
    const cases: [body: unknown, error: string | RegExp][] = [
      [{ scope: 'org:Acme', guarantee: { gpus: 1.5 } }, 'guarantee.gpus must be a whole number'],
      [{ scope: 'org:Acme', limit: { cores: -1 } }, 'limit.cores must not be negative'],
      [{ scope: 'org:Acme', limits: { gpus: 1 } }, 'unknown field "limits"'],
      [{ scope: 'org:Acme', limit: { tpus: 1 } }, 'unknown field "tpus" in limit'],
      ['[', /^the request is not valid JSON: /],
    ];
    for (const [body, error] of cases) {
      assertError(await send(app, 'PUT', '/api/v1/quotas', body), 400, error);
      assertError(await send(app, 'POST', '/api/v1/quotas/preview', body), 400, error);
    }
  });

  it('refuses a body over 16 KiB (413)', async () => {
    assertError(
      await send(app, 'PUT', '/api/v1/quotas', JSON.stringify({ scope: 'x'.repeat(16 * 1024) })),
      413,
      'the body is larger than 16 KiB, the most this endpoint takes',
    );
  });
});
