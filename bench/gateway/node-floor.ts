// The least a router on Node can do, as a process of its own for the gateway bench: a TCP relay that
// joins each client connection to a connection of its own to one engine (round robin) and copies bytes
// both ways as they come, in WORKERS processes sharing the port as llmgw's gateway workers do. No HTTP
// is read, no request is routed, nothing is counted: what it adds to a request's time is what Node's
// event loop and the kernel's sockets cost, the floor under any gateway written for Node.
// Usage: node-floor.ts PORT WORKERS ENGINE_URL...; prints "ready" once every worker listens.
import cluster from 'node:cluster';
import { connect, createServer, type Socket } from 'node:net';

const [port, workers, ...engines] = process.argv.slice(2);
const targets = engines.map((engine) => new URL(engine));

/** Copies what `from` reads to `to`, pausing `from` while `to` is full. */
function relay(from: Socket, to: Socket) {
  from.on('data', (bytes: Buffer) => {
    if (!to.write(bytes)) from.pause();
  });
  to.on('drain', () => from.resume());
}

if (cluster.isPrimary) {
  let listening = 0;
  for (let i = 0; i < Number(workers); i++) {
    cluster.fork().once('listening', () => {
      if (++listening === Number(workers)) console.log('ready');
    });
  }
  // A worker that could not listen (the port taken) ends the floor: the bench hears of it.
  cluster.on('exit', () => {
    if (listening < Number(workers)) process.exit(1);
  });
  process.on('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
    process.exit(0);
  });
} else {
  let next = 0;
  createServer({ noDelay: true }, (client) => {
    const target = targets[next++ % targets.length];
    const engine = connect({ host: target.hostname, port: Number(target.port), noDelay: true });
    relay(client, engine);
    relay(engine, client);
    const close = () => {
      client.destroy();
      engine.destroy();
    };
    for (const socket of [client, engine]) socket.on('close', close).on('error', close);
  }).listen(Number(port), '127.0.0.1');
}
