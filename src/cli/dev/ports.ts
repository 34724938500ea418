import { createServer } from 'node:net';

/** Whether something already listens on host:port. */
export function portInUse(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(true));
    server.listen(port, host, () => server.close(() => resolve(false)));
  });
}

/** A port that was free a moment ago (for tests and benchmarks). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * The first of `size` consecutive ports that were all free a moment ago (a Temporal server takes a block).
 * Drawn below Linux's ephemeral range (32768 on), where outgoing connections take ports of their own.
 */
export async function freePortBlock(size: number, host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = 20_000 + Math.floor(Math.random() * (32_768 - 20_000 - size));
    const ports = Array.from({ length: size }, (_, index) => first + index);
    const busy = await Promise.all(ports.map((port) => portInUse(port, host)));
    if (!busy.includes(true)) return first;
  }
  throw new Error(`found no ${size} consecutive free ports between 20000 and 32767`);
}
