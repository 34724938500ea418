// JSON bodies under any reasonable Content-Type (issue 19, item 8): media types parsed as RFC 9110
// writes them, and neither Hono's "Unsupported Media Type" nor its own validator's view of the
// header decides what a route takes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { jsonBody, toErrorResponse, validationHook } from '../../src/api/http.ts';
import { parseMediaType } from '../../src/api/media-type.ts';

describe('parseMediaType', () => {
  it('reads type and subtype in lower case, whatever the spaces, case and parameters', () => {
    for (const header of [
      'application/json',
      'application/json ; charset=utf-8',
      'Application/JSON;Charset=UTF-8',
      ' application/json\t',
      'application/json;',
      'application/json;;charset=utf-8',
      'application/json; charset="utf-8"; q="a;b=\\"c"',
      'application/json; charset=utf-8 ;',
    ]) {
      assert.deepEqual(parseMediaType(header), { type: 'application', subtype: 'json' }, header);
    }
    assert.deepEqual(parseMediaType('application/problem+json'), {
      type: 'application',
      subtype: 'problem+json',
    });
  });

  it('refuses what is not a media type', () => {
    for (const header of [
      '',
      'json',
      'application /json',
      'application/json, text/plain',
      'application/json; charset = utf-8',
      'application/json; charset',
      'application/json; charset="utf-8',
      'application/json; @=x',
    ]) {
      assert.equal(parseMediaType(header), null, header);
    }
  });

  it('takes linear time on long headers made to backtrack', () => {
    const start = performance.now();
    for (const header of [
      `a/b;${' '.repeat(16_000)}!`,
      `a/b${'; '.repeat(8_000)}!`,
      `a/b; x="${'\\"'.repeat(8_000)}`,
    ]) {
      assert.equal(parseMediaType(header), null);
    }
    assert.ok(performance.now() - start < 50, `took ${performance.now() - start} ms`);
  });
});

describe('jsonBody and the route validators', () => {
  const app = new OpenAPIHono({ defaultHook: validationHook });
  const body = { content: { 'application/json': { schema: z.object({ n: z.number() }) } }, required: true };
  const answer = { 200: { description: 'n' } };
  app.openapi(
    createRoute({
      method: 'post',
      path: '/checked',
      middleware: [jsonBody(1024)] as const,
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
  app.onError((error, c) => toErrorResponse(error, c) ?? c.json({ error: 'unexpected' }, 500));
  const post = (path: string, type: string) =>
    app.request(path, { method: 'POST', headers: { 'content-type': type }, body: '{"n": 7}' });

  it('a route with jsonBody validates the body under any JSON media type', async () => {
    for (const type of [
      'application/json ; charset=utf-8',
      'APPLICATION/JSON',
      'application/vnd.llmgw+json; v=1',
    ]) {
      const response = await post('/checked', type);
      assert.equal(response.status, 200, type);
      assert.deepEqual(await response.json(), { n: 7 });
    }
  });

  it("Hono's 415 becomes the API's sentence", async () => {
    const response = await post('/unchecked', 'text/plain');
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), {
      error: 'send the body as JSON, with Content-Type: application/json',
    });
  });
});
