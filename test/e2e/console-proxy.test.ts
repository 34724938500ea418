// The console served as behind a proxy that terminates TLS (LLMGW_TRUST_PROXY=1) and links to a Temporal
// UI elsewhere (LLMGW_TEMPORAL_UI_URL): real requests to `llmgw serve`'s plain-HTTP server, whose scheme
// is the socket's, so only the proxy's X-Forwarded-Proto can tell that the browser came over TLS.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ok } from '../support/cluster.ts';
import { type Stack, startStack } from '../support/stack.ts';

/** What the console's sign-in form answers `token`, posted with `headers`. */
async function signIn(stack: Stack, token: string, headers: Record<string, string> = {}) {
  return fetch(`${stack.url}/ui/sign-in`, {
    method: 'POST',
    body: new URLSearchParams({ token }),
    headers: { origin: stack.url, ...headers },
    redirect: 'manual',
  });
}

const setCookie = (answer: Response) => answer.headers.get('set-cookie') ?? '';

describe('the console, not told to trust a proxy (as llmgw starts by default)', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => stack?.stop());

  it("ignores a client's X-Forwarded-Proto: the cookie is not Secure over plain HTTP", async () => {
    const answer = await signIn(stack, stack.adminToken, { 'x-forwarded-proto': 'https' });
    assert.equal(answer.status, 303);
    assert.match(setCookie(answer), /llmgw_session=/);
    assert.doesNotMatch(setCookie(answer), /Secure/);
  });
});

describe('the console behind a TLS-terminating proxy, with the Temporal UI elsewhere', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({
      env: { LLMGW_TRUST_PROXY: '1', LLMGW_TEMPORAL_UI_URL: 'https://temporal.example.com/ui/' },
    });
  });
  after(async () => stack?.stop());

  it('sets the session cookie Secure when the proxy says https, and not when it says http', async () => {
    const overTls = await signIn(stack, stack.adminToken, { 'x-forwarded-proto': 'https' });
    assert.equal(overTls.status, 303);
    assert.match(setCookie(overTls), /llmgw_session=.*; Secure/);
    const plain = await signIn(stack, stack.adminToken, { 'x-forwarded-proto': 'http' });
    assert.equal(plain.status, 303);
    assert.doesNotMatch(setCookie(plain), /Secure/);
  });

  it("links each model's reconciler to the Temporal UI at LLMGW_TEMPORAL_UI_URL", async () => {
    await ok(stack, 'PUT', '/api/v1/models/chat', {
      min_replicas: 0,
      max_replicas: 1,
      profiles: [{ name: 'p', priority: 1, resources: { cores: 1 } }],
    });
    const cookie = setCookie(await signIn(stack, stack.adminToken)).split(';')[0]!;
    const page = await (await fetch(`${stack.url}/ui/models`, { headers: { cookie } })).text();
    const workflows = `https://temporal.example.com/ui/namespaces/${stack.config.temporalNamespace}/workflows`;
    const query = encodeURIComponent('WorkflowId="reconcile:chat"');
    assert.ok(page.includes(`href="${workflows}?query=${query}"`), page);
  });
});
