// llmgw dev's Temporal UI only reads (issue 30, LOW: the dev server's UI had its write actions on): a
// front refuses every write before the UI server sees it, and the UI's settings say write actions are
// off, so it greys them out. Against a stand-in UI server that records what reaches it.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startReadOnlyUi } from '../../../src/cli/dev/read-only-ui.ts';

describe("llmgw dev's read-only Temporal UI", () => {
  let upstream: Server;
  let ui: Awaited<ReturnType<typeof startReadOnlyUi>>;
  const reached: string[] = [];

  before(async () => {
    upstream = createServer((req, res) => {
      reached.push(`${req.method} ${req.url}`);
      if (req.url === '/api/v1/settings') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ DisableWriteActions: false, Version: '2.0.0', DefaultNamespace: 'default' }),
        );
      } else {
        res.writeHead(200, { 'content-type': 'text/html', 'x-upstream': 'yes' });
        res.end(`<p>${req.url}</p>`);
      }
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    ui = await startReadOnlyUi({ port: 0, upstreamPort: (upstream.address() as AddressInfo).port });
  });
  after(async () => {
    await ui.stop();
    await new Promise((resolve) => upstream.close(resolve));
  });

  it('refuses every write (terminate, signal, reset, start, batch) with 403 before the UI server sees it', async () => {
    reached.length = 0;
    const path = '/api/v1/namespaces/default/workflows/reconcile%3Achat/terminate';
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const answer = await fetch(`${ui.url}${path}`, {
        method,
        body: method === 'DELETE' ? undefined : '{}',
      });
      assert.equal(answer.status, 403, method);
      assert.match(await answer.text(), /^llmgw dev's Temporal UI only reads: its write actions are off/);
    }
    assert.deepEqual(reached, [], 'no write reached the UI server');
  });

  it('tells the UI that write actions are off, and passes every read through as it is', async () => {
    const settings = await (await fetch(`${ui.url}/api/v1/settings`)).json();
    assert.deepEqual(settings, { DisableWriteActions: true, Version: '2.0.0', DefaultNamespace: 'default' });
    const page = await fetch(`${ui.url}/namespaces/default/workflows?query=x`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('x-upstream'), 'yes');
    assert.equal(await page.text(), '<p>/namespaces/default/workflows?query=x</p>');
  });
});
