import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gpuNode, gpuProfile, ok } from '../support/cluster.ts';
import { type Stack, startStack } from '../support/stack.ts';

/** Bad requests at the gateway: one status, OpenAI's error shape, one sentence, and nothing forwarded. */
describe('the gateway refuses bad requests', () => {
  let stack: Stack;
  let key: string;
  before(async () => {
    stack = await startStack({ gateway: true, nodes: [gpuNode('gpu-1', 8)] });
    await ok(stack, 'POST', '/api/v1/orgs', { name: 'Acme' });
    await ok(stack, 'PUT', '/api/v1/models/chat', {
      owner: 'org:Acme',
      max_replicas: 1,
      profiles: [gpuProfile('h100', 1)],
    });
    key = await stack.token({ name: 'app', role: 'client', scope: 'org:Acme' });
  });
  after(() => stack?.stop());

  const send = async (
    path: string,
    body: string | Uint8Array<ArrayBuffer>,
    headers: Record<string, string> = {},
  ) => {
    const answer = await fetch(`${stack.gatewayUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: answer.status, body: await answer.json() };
  };

  const cases: [
    name: string,
    path: string,
    body: () => string | Uint8Array<ArrayBuffer>,
    status: number,
    code: string,
    sentence: RegExp,
  ][] = [
    [
      'a body that is not JSON',
      '/v1/chat/completions',
      () => '{"model":',
      400,
      'invalid_request',
      /^the body is not valid JSON: /,
    ],
    [
      // The forwarded endpoints are matched on their path alone, as Hono's routes are (proxy.ts).
      'a forwarded endpoint with a query string, served as without it',
      '/v1/chat/completions?api-version=1',
      () => '{"model":',
      400,
      'invalid_request',
      /^the body is not valid JSON: /,
    ],
    [
      'no model',
      '/v1/chat/completions',
      () => '{"messages":[]}',
      400,
      'invalid_request',
      /^the body must be a JSON object whose "model" names a model/,
    ],
    [
      'a model that is not a string',
      '/v1/embeddings',
      () => '{"model":7}',
      400,
      'invalid_request',
      /"model" names a model/,
    ],
    [
      'a body over 8 MiB',
      '/v1/completions',
      () => new Uint8Array(9 * 1024 * 1024),
      413,
      'request_too_large',
      /^the body is larger than 8 MiB/,
    ],
    [
      'a path the gateway does not serve',
      '/v1/images/generations',
      () => '{"model":"chat"}',
      404,
      'not_found',
      /^the gateway has no POST \/v1\/images\/generations; it serves POST \/v1\/chat\/completions/,
    ],
  ];
  for (const [name, path, body, status, code, sentence] of cases) {
    it(`${name}: ${status} ${code}`, async () => {
      const answer = await send(path, body());
      assert.equal(answer.status, status, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, code);
      assert.match(answer.body.error.message, sentence);
      assert.doesNotMatch(answer.body.error.message, /\n\s+at /, 'no stack trace');
    });
  }

  it('a forwarded endpoint called with GET: 404 naming what the gateway serves', async () => {
    const answer = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(answer.status, 404);
    const body = await answer.json();
    assert.equal(body.error.code, 'not_found');
    assert.match(body.error.message, /^the gateway has no GET \/v1\/chat\/completions; it serves POST /);
  });

  it('a viewer token may not call models: 403 saying what a viewer does', async () => {
    const viewer = await stack.token({ name: 'eyes', role: 'viewer' });
    const answer = await send('/v1/chat/completions', '{"model":"chat"}', {
      authorization: `Bearer ${viewer}`,
    });
    assert.equal(answer.status, 403);
    assert.equal(answer.body.error.message, 'a viewer may not call models: a viewer only reads');
  });

  it('a revoked key stops working within the key cache (2 s)', async () => {
    const doomed = await stack.token({ name: 'doomed', role: 'client', scope: 'org:Acme' });
    const models = () =>
      fetch(`${stack.gatewayUrl}/v1/models`, { headers: { authorization: `Bearer ${doomed}` } });
    assert.equal((await models()).status, 200);
    await ok(stack, 'DELETE', '/api/v1/tokens/doomed');
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const answer = await models();
    assert.equal(answer.status, 401);
    assert.equal((await answer.json()).error.message, 'this API key is unknown, was revoked or expired');
  });

  it('GET /metrics wants a metrics or admin token, as the API does', async () => {
    const asClient = await fetch(`${stack.gatewayUrl}/metrics`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(asClient.status, 403);
    const asPrometheus = await fetch(`${stack.gatewayUrl}/metrics`, {
      headers: { authorization: `Bearer ${stack.metricsToken}` },
    });
    assert.equal(asPrometheus.status, 200);
    assert.match(await asPrometheus.text(), /# TYPE llmgw_gateway_requests_total counter/);
  });
});
