// The whole app in-process, before anyone is authenticated: no store is reached to answer these.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertError } from '../../support/assertions.ts';
import { send, wholeApp } from './in-process.ts';

const NEEDS_TOKEN = 'a valid bearer token is needed: send the header Authorization: Bearer <token>';

describe('the app, before authentication', () => {
  const app = wholeApp();

  it('answers a path it lacks with 404 JSON', async () => {
    assertError(await send(app, 'GET', '/nope'), 404, 'there is no GET /nope; see /docs');
    assertError(await send(app, 'DELETE', '/docs'), 404, 'there is no DELETE /docs; see /docs');
  });

  it('answers 401 under /api/v1 without a bearer token, known route or not', async () => {
    for (const path of ['/api/v1/models', '/api/v1/nope']) {
      assertError(await send(app, 'GET', path), 401, NEEDS_TOKEN);
    }
    const basic = await app.request('/api/v1/quotas', {
      method: 'PUT',
      headers: { authorization: 'Basic YTpi' },
    });
    assert.equal(basic.status, 401);
    assert.equal(basic.headers.get('www-authenticate'), 'Bearer');
    assert.deepEqual(await basic.json(), { error: NEEDS_TOKEN });
  });
});
