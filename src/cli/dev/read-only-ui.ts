import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the Temporal UI reads its settings from; its answer says whether write actions are on. */
const SETTINGS = /^\/api\/v1\/settings(\?|$)/;
const READS = ['GET', 'HEAD', 'OPTIONS'];

/**
 * The Temporal dev server's Web UI behind a read-only front (issue 30, LOW: its write actions were on).
 * The CLI's dev server has no flag for the UI server's `disableWriteActions`, so this front does both
 * halves: it answers every request that is not a read 403, before the UI server sees it (terminate,
 * cancel, signal, reset, start, batch: each is a POST to the UI server's API), and it sets
 * `DisableWriteActions` in the UI's settings, so the UI greys those buttons out. Reads pass through.
 */
export async function startReadOnlyUi(options: {
  port: number;
  upstreamPort: number;
}): Promise<{ url: string; stop: () => Promise<void> }> {
  const server = createServer((req, res) => {
    if (!READS.includes(req.method ?? '')) {
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(
        "llmgw dev's Temporal UI only reads: its write actions are off; use llmgw ctl or the temporal CLI\n",
      );
      return;
    }
    const settings = SETTINGS.test(req.url ?? '');
    const headers = { ...req.headers };
    // The settings are rewritten: they must come uncompressed.
    if (settings) delete headers['accept-encoding'];
    const upstream = request(
      { host: '127.0.0.1', port: options.upstreamPort, method: req.method, path: req.url, headers },
      (answer) => {
        if (!settings || answer.statusCode !== 200) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const body = Buffer.from(
            JSON.stringify({
              ...JSON.parse(Buffer.concat(chunks).toString('utf8')),
              DisableWriteActions: true,
            }),
          );
          const { 'transfer-encoding': _chunked, ...kept } = answer.headers;
          res.writeHead(200, { ...kept, 'content-length': String(body.length) });
          res.end(body);
        });
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('the Temporal UI does not answer\n');
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
