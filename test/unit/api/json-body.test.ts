// Issue 20: every body is read as JSON whatever its Content-Type, as the original API did (plain
// `curl -d` sends application/x-www-form-urlencoded); only a body that is not JSON is refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { answerErrors } from '../../../src/api/answer-errors.ts';
import { jsonBody, validationHook } from '../../../src/api/http.ts';

const TYPES = [
  undefined,
  'application/json',
  'application/x-www-form-urlencoded',
  'text/plain;charset=UTF-8',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json, text/plain',
  'not a media type',
];

describe('jsonBody', () => {
  const app = new OpenAPIHono({ defaultHook: validationHook });
  const body = { content: { 'application/json': { schema: z.object({ n: z.number() }) } }, required: true };
  const answer = { 200: { description: 'n' } };
  app.openapi(
    createRoute({
      method: 'post',
      path: '/checked',
      middleware: [jsonBody(64)] as const,
      request: { body },
      responses: answer,
    }),
    (c) => c.json({ n: c.req.valid('json').n }, 200),
  );
  // A body route someone forgot to give jsonBody: Hono's own media type check answers.
  app.openapi(
    createRoute({ method: 'post', path: '/unchecked', request: { body }, responses: answer }),
    (c) => c.json({ n: c.req.valid('json').n }, 200),
  );
  answerErrors(app, console);
  /** A body of bytes, so that no Content-Type is added unless given. */
  const post = async (path: string, text: string, type?: string) => {
    const response = await app.request(path, {
      method: 'POST',
      headers: type === undefined ? {} : { 'content-type': type },
      body: new TextEncoder().encode(text),
    });
    return { status: response.status, body: await response.json() };
  };

  it('reads a JSON body under any Content-Type, or none', async () => {
    for (const type of TYPES) {
      assert.deepEqual(await post('/checked', '{"n": 7}', type), { status: 200, body: { n: 7 } }, type);
    }
  });

  it('refuses only a body that is not JSON, with the original sentence', async () => {
    for (const type of TYPES) {
      const refused = await post('/checked', 'n=7', type);
      assert.equal(refused.status, 400, type);
      assert.match(refused.body.error, /^the request is not valid JSON: \S/, type);
    }
    assert.match((await post('/checked', '')).body.error, /^the request is not valid JSON: /);
  });

  it('keeps 413 for a body above its bound, whatever its type', async () => {
    const big = JSON.stringify({ n: 1, pad: 'x'.repeat(100) });
    for (const type of TYPES) assert.equal((await post('/checked', big, type)).status, 413, type);
  });

  it("Hono's 415 on a route without jsonBody becomes the API's sentence", async () => {
    assert.deepEqual(await post('/unchecked', '{"n": 7}', 'text/plain'), {
      status: 400,
      body: { error: 'send the body as JSON, with Content-Type: application/json' },
    });
  });
});
