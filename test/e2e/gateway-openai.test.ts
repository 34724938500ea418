import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI, { AuthenticationError, NotFoundError, PermissionDeniedError } from 'openai';
import { FAST, gpuNode, gpuProfile, ok } from '../support/cluster.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

/** The official `openai` client against the gateway, in front of two replicas of the simulated engine. */
describe('the gateway, as the openai SDK sees it', () => {
  let stack: Stack;
  let ml: OpenAI;
  let web: OpenAI;
  let webKey: string;
  const client = (apiKey: string | null) =>
    new OpenAI({
      apiKey: apiKey ?? 'unused',
      baseURL: `${stack.gatewayUrl}/v1`,
      maxRetries: 0,
      // The SDK will not go without a key; a null header is one it leaves out.
      ...(apiKey === null ? { defaultHeaders: { authorization: null } } : {}),
    });

  before(async () => {
    stack = await startStack({ worker: true, gateway: true, env: FAST, nodes: [gpuNode('gpu-1', 8)] });
    await ok(stack, 'POST', '/api/v1/orgs', { name: 'Acme' });
    for (const name of ['ml', 'web']) await ok(stack, 'POST', '/api/v1/teams', { org: 'Acme', name });
    await ok(stack, 'PUT', '/api/v1/models/chat', {
      owner: 'team:Acme/ml',
      min_replicas: 2,
      max_replicas: 2,
      profiles: [gpuProfile('h100', 1, { default_concurrency: 8, engine: { kind: 'sim', base_tpot_ms: 2 } })],
    });
    ml = client(await stack.token({ name: 'ml-app', role: 'client', scope: 'team:Acme/ml' }));
    webKey = await stack.token({ name: 'web-app', role: 'client', scope: 'team:Acme/web' });
    web = client(webKey);
    await eventually(
      'two replicas of chat the gateway routes to',
      async () => (await ml.models.list()).data.find((m) => m.id === 'chat' && readyOf(m) === 2),
      30_000,
    );
  });
  after(() => stack?.stop());

  const messages = [{ role: 'user' as const, content: 'say something' }];

  it('answers a chat completion that does not stream', async () => {
    const answer = await ml.chat.completions.create({ model: 'chat', messages, max_tokens: 5 });
    assert.equal(answer.object, 'chat.completion');
    assert.equal(answer.choices[0].message.content, ' tok0 tok1 tok2 tok3 tok4');
    assert.equal(answer.usage?.completion_tokens, 5);
  });

  it('streams a chat completion chunk by chunk, with its usage at the end', async () => {
    const stream = await ml.chat.completions.create({
      model: 'chat',
      messages,
      max_tokens: 6,
      stream: true,
      stream_options: { include_usage: true },
    });
    const pieces: string[] = [];
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      pieces.push(chunk.choices[0]?.delta.content ?? '');
      usage = chunk.usage ?? usage;
    }
    assert.equal(pieces.join(''), ' tok0 tok1 tok2 tok3 tok4 tok5');
    assert.ok(pieces.length >= 7, `the tokens came as chunks of their own (${pieces.length})`);
    assert.equal(usage?.completion_tokens, 6);
  });

  it('answers a text completion, streamed and not', async () => {
    const whole = await ml.completions.create({ model: 'chat', prompt: 'once upon', max_tokens: 3 });
    assert.equal(whole.choices[0].text, ' tok0 tok1 tok2');
    const stream = await ml.completions.create({
      model: 'chat',
      prompt: 'a time',
      max_tokens: 3,
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    assert.equal(text, ' tok0 tok1 tok2');
  });

  it('answers embeddings, which the SDK asks for as base64 and decodes', async () => {
    const answer = await ml.embeddings.create({ model: 'chat', input: ['one', 'two words'] });
    assert.equal(answer.data.length, 2);
    for (const [index, item] of answer.data.entries()) {
      assert.equal(item.index, index);
      assert.equal(item.embedding.length, 8);
      assert.ok(
        item.embedding.every((value) => Number.isFinite(value) && Math.abs(value) <= 0.5),
        'decoded floats',
      );
    }
    assert.notDeepEqual(answer.data[0].embedding, answer.data[1].embedding);
  });

  it('lists to each key only the models of its scope, with their ready replicas', async () => {
    const listed = (await ml.models.list()).data;
    assert.deepEqual(
      listed.map((m) => [m.id, m.owned_by, readyOf(m)]),
      [['chat', 'team Acme / ml', 2]],
    );
    assert.deepEqual((await web.models.list()).data, []);
  });

  it("raises the SDK's own errors: NotFoundError, AuthenticationError, PermissionDeniedError", async () => {
    const ask = (api: OpenAI, model: string) =>
      api.chat.completions.create({ model, messages, max_tokens: 1 });
    const unknown = await ask(ml, 'no-such-model').catch((error) => error);
    assert.ok(unknown instanceof NotFoundError, String(unknown));
    assert.equal(unknown.code, 'model_not_found');
    assert.match(unknown.message, /there is no model "no-such-model"; GET \/v1\/models lists/);

    const noKey = await ask(client(null), 'chat').catch((error) => error);
    assert.ok(noKey instanceof AuthenticationError, String(noKey));
    assert.match(noKey.message, /an API key is needed: send the header Authorization: Bearer <key>/);

    const unknownKey = await ask(client('not-a-key-at-all'), 'chat').catch((error) => error);
    assert.ok(unknownKey instanceof AuthenticationError, String(unknownKey));
    assert.match(unknownKey.message, /this API key is unknown, was revoked or expired/);

    // Another team's model is a model this key cannot see: NotFoundError, as for one that does not exist.
    const otherTeam = await ask(web, 'chat').catch((error) => error);
    assert.ok(otherTeam instanceof NotFoundError, String(otherTeam));
    assert.equal(otherTeam.code, 'model_not_found');

    // A role that calls no model at all is told so.
    const viewer = client(await stack.token({ name: 'a-viewer', role: 'viewer' }));
    const notAClient = await ask(viewer, 'chat').catch((error) => error);
    assert.ok(notAClient instanceof PermissionDeniedError, String(notAClient));
    assert.equal(notAClient.code, 'model_not_permitted');
  });

  it("answers another team's model byte for byte as a missing one (names stay private)", async () => {
    const raw = async (model: string) => {
      const response = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${webKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages, max_tokens: 1 }),
      });
      // The date, and the request's own ID (made for each request), differ between any two answers.
      assert.match(response.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
      const headers = [...response.headers].filter(([name]) => name !== 'date' && name !== 'x-request-id');
      return { status: response.status, headers, body: await response.text() };
    };
    // A missing name of the same length, so that even the lengths agree once the name is put back.
    const foreign = await raw('chat');
    const missing = await raw('chaX');
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign, { ...missing, body: missing.body.replaceAll('chaX', 'chat') });
  });
});

const readyOf = (model: OpenAI.Model) => (model as OpenAI.Model & { ready_replicas: number }).ready_replicas;
