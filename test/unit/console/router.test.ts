// The console's router and the events route, answered in-process before the store is reached.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hono } from 'hono';
import { eventsRouter } from '../../../src/api/routes/events/index.ts';
import { startSession } from '../../../src/console/session.ts';
import { routerAs, send, wholeApp } from '../api/in-process.ts';

describe('the console at /ui, before anyone signs in', () => {
  const app = wholeApp();

  it('sends a request without a session to the sign-in page', async () => {
    for (const path of [
      '/ui/tree',
      '/ui/models',
      '/ui/models/chat',
      '/ui/nodes',
      '/ui/quota-preview',
      '/ui/events',
    ]) {
      const answer = await app.request(path);
      assert.equal(answer.status, 303, path);
      assert.equal(answer.headers.get('location'), '/ui/sign-in');
    }
  });

  it('refuses a sign-in form posted from another site (CSRF), and one with no token in one sentence', async () => {
    const form = new URLSearchParams({ token: 'x' });
    const forged = await app.request('http://localhost/ui/sign-in', {
      method: 'POST',
      body: form,
      headers: { origin: 'https://elsewhere.example', 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(forged.status, 403);
    const empty = await app.request('http://localhost/ui/sign-in', {
      method: 'POST',
      body: new URLSearchParams({ token: ' ' }),
      headers: { origin: 'http://localhost', 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(empty.status, 400);
    assert.match(await empty.text(), /give a token/);
  });

  it('signs out from its own pages only: a sign-out posted from another site is refused (CSRF)', async () => {
    const signOut = (origin: string) =>
      app.request('http://localhost/ui/sign-out', {
        method: 'POST',
        body: new URLSearchParams(),
        headers: {
          origin,
          cookie: 'llmgw_session=secret',
          'content-type': 'application/x-www-form-urlencoded',
        },
      });
    const forged = await signOut('https://elsewhere.example');
    assert.equal(forged.status, 403);
    assert.equal(forged.headers.get('set-cookie'), null, 'the session is left alone');
    const own = await signOut('http://localhost');
    assert.equal(own.status, 303);
    assert.equal(own.headers.get('location'), '/ui/sign-in');
    assert.match(own.headers.get('set-cookie') ?? '', /^llmgw_session=; Max-Age=0; Path=\/ui/);
  });

  it('serves its stylesheet and script itself, and the sign-in page loads nothing from elsewhere', async () => {
    for (const [file, type] of [
      ['console.css', 'text/css'],
      ['live.js', 'text/javascript'],
    ]) {
      const answer = await app.request(`/ui/assets/${file}`);
      assert.equal(answer.status, 200);
      assert.match(answer.headers.get('content-type') ?? '', new RegExp(type));
    }
    const answer = await app.request('/ui/sign-in');
    assert.match(
      answer.headers.get('content-security-policy') ?? '',
      /default-src 'self'.*frame-ancestors 'none'/,
    );
    const page = await answer.text();
    assert.doesNotMatch(page, /(src|href)="(https?:)?\/\//);
    assert.match(page, /<form class="sign-in" method="post" action="\/ui\/sign-in">/);
  });
});

describe('the session cookie', () => {
  /** The cookie a plain-HTTP sign-in sets (as llmgw is served), with the proxy's header or without. */
  const cookie = async (trustProxy: boolean, forwardedProto?: string) => {
    const app = new Hono().post('/ui/sign-in', (c) => {
      startSession(c, 'secret', { trustProxy });
      return c.text('ok');
    });
    const headers: Record<string, string> = forwardedProto ? { 'x-forwarded-proto': forwardedProto } : {};
    const answer = await app.request('http://console.example/ui/sign-in', { method: 'POST', headers });
    return answer.headers.get('set-cookie') ?? '';
  };

  it('is HttpOnly, SameSite=Strict and sent only to /ui, and not Secure over plain HTTP', async () => {
    const plain = await cookie(false);
    assert.match(plain, /HttpOnly/);
    assert.match(plain, /SameSite=Strict/);
    assert.match(plain, /Path=\/ui/);
    assert.doesNotMatch(plain, /Secure/);
  });

  it('is Secure when a trusted proxy says the browser came over TLS, and only then', async () => {
    assert.match(await cookie(true, 'https'), /Secure/);
    assert.match(await cookie(true, 'https, http'), /Secure/, 'the scheme the browser used comes first');
    assert.doesNotMatch(await cookie(true, 'http'), /Secure/);
    assert.doesNotMatch(await cookie(true), /Secure/);
    // Anyone can write the header: without LLMGW_TRUST_PROXY it is not believed.
    assert.doesNotMatch(await cookie(false, 'https'), /Secure/);
  });
});

describe('GET /api/v1/events', () => {
  it('needs a role that reads: a reporter is refused (403) before anything is streamed', async () => {
    const reporter = { name: 'r', role: 'reporter' as const, scope: null, models: null };
    const app = routerAs(eventsRouter, reporter);
    const answer = await send(app, 'GET', '/api/v1/events');
    assert.equal(answer.status, 403);
    assert.match(answer.body.error, /a reporter may not read/);
  });
});
