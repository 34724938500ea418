import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An engine that closes its connection after each streamed answer while its headers say `Keep-Alive`,
 * as llama.cpp's server does, at the worst moment for its clients: a request sent on a connection it
 * already answered on finds that connection closed (here: closed when the request arrives, so that every
 * reuse loses the race a real engine loses now and then). It streams one token and `usage`.
 */
export interface ClosingEngine {
  url: string;
  /** Answers sent, and requests dropped with their connection. */
  answered: number;
  dropped: number;
  stop(): Promise<void>;
}

export async function startClosingEngine(): Promise<ClosingEngine> {
  const served = new WeakSet<object>();
  const engine: ClosingEngine = { url: '', answered: 0, dropped: 0, stop: async () => {} };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (served.has(req.socket)) {
      engine.dropped++;
      return void req.socket.destroy();
    }
    served.add(req.socket);
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream', 'keep-alive': 'timeout=5, max=100' });
    const chunk = (delta: object) => `data: ${JSON.stringify({ choices: [{ delta }] })}\n\n`;
    res.write(chunk({ content: 'a' }));
    res.write(chunk({ content: 'b' }));
    res.write(`data: ${JSON.stringify({ choices: [], usage: { completion_tokens: 2 } })}\n\n`);
    res.end('data: [DONE]\n\n', () => engine.answered++);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  engine.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  engine.stop = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return engine;
}
