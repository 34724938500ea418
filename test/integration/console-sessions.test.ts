// Console sessions (issue 30, LOW: the console's cookie was the bearer token itself, and signing out did
// not end it): the cookie holds an opaque session ID, the store keeps only hashes, the ID is no token
// anywhere else, and signing out ends it on the server, so a copied cookie dies too.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Stack, startStack } from '../support/stack.ts';

describe('console sessions', () => {
  let stack: Stack;
  let token: string;
  before(async () => {
    stack = await startStack();
    token = await stack.token({ name: 'console-viewer', role: 'viewer' });
  });
  after(() => stack.stop());

  /** What a browser on the console's own page sends with a form. */
  const form = (path: string, body: Record<string, string>, cookie?: string) =>
    fetch(`${stack.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: stack.url,
        'sec-fetch-site': 'same-origin',
        ...(cookie && { cookie }),
      },
      body: new URLSearchParams(body),
    });
  const page = (cookie: string) =>
    fetch(`${stack.url}/ui/models`, { headers: { cookie }, redirect: 'manual' });

  it('keeps an opaque ID in the cookie, never the token, and ends it on sign-out for every copy', async () => {
    const signIn = await form('/ui/sign-in', { token });
    assert.equal(signIn.status, 303);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0];
    const [name, id] = cookie.split('=');
    assert.equal(name, 'llmgw_session');
    assert.match(id, /^llmgw_session_[\w-]{43}$/);
    assert.ok(!cookie.includes(token), 'the cookie holds no token');
    assert.equal((await page(cookie)).status, 200);

    // The store keeps hashes only, and the ID opens nothing but the console.
    const rows = await stack.sql`select * from console_sessions`;
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(id) && !JSON.stringify(rows).includes(token));
    for (const authorization of [`Bearer ${id}`, `Session ${id}`]) {
      const answer = await fetch(`${stack.url}/api/v1/orgs`, { headers: { authorization } });
      assert.equal(answer.status, 401, `${authorization.split(' ')[0]} <session ID> at the API`);
    }

    const signOut = await form('/ui/sign-out', {}, cookie);
    assert.equal(signOut.status, 303);
    const replayed = await page(cookie);
    assert.equal(replayed.status, 303, 'a copy of the cookie is signed out too');
    assert.equal(replayed.headers.get('location'), '/ui/sign-in');
    assert.equal((await stack.sql`select * from console_sessions`).length, 0);
    // The token itself still works: signing out of the console revokes nothing.
    const answer = await fetch(`${stack.url}/api/v1/orgs`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(answer.status, 200);
  });

  it('a session of a token revoked since is signed out at once', async () => {
    const other = await stack.token({ name: 'to-revoke', role: 'viewer' });
    const cookie = (await form('/ui/sign-in', { token: other })).headers.get('set-cookie')!.split(';')[0];
    assert.equal((await page(cookie)).status, 200);
    await stack.sql`delete from api_tokens where name = 'to-revoke'`;
    assert.equal((await page(cookie)).status, 303);
  });
});
