import { connect } from 'node:net';

/** What an engine answers 200 on once it serves: vLLM, SGLang and llama.cpp /health; any OpenAI server /v1/models. */
const READY_PATHS = ['/health', '/v1/models'];

/**
 * How often a start looks whether its engine is ready: the most it adds to the start. A look at an
 * engine that does not listen yet is one refused connection, about 0.1 ms of CPU.
 */
export const READY_POLL_MS = 25;

/** Whether the engine at `url` says it is ready, within a second. */
export async function answersReady(url: string): Promise<boolean> {
  // An engine starting does not listen yet: a refused fetch costs some 0.6 ms of CPU, six times a
  // refused connection, and the agent looks at each engine starting 40 times a second.
  if (!(await listens(url))) return false;
  for (const path of READY_PATHS) {
    try {
      const answer = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(1000) });
      await answer.body?.cancel();
      if (answer.status === 200) return true;
    } catch {
      // Too slow to answer, or gone meanwhile: try the next path, then the next round.
    }
  }
  return false;
}

/** Whether anything accepts a connection on the port of `url` within a second. */
function listens(url: string): Promise<boolean> {
  const { hostname, port, protocol } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({
      host: hostname.replace(/^\[|\]$/g, ''),
      port: Number(port) || (protocol === 'https:' ? 443 : 80),
      timeout: 1000,
    });
    const done = (listening: boolean) => {
      socket.destroy();
      resolve(listening);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

/**
 * Waits until the engine at `url` is ready: true then, false when `timeoutMs` passes first. Stops
 * waiting as soon as `gone` settles (the engine exited), with false.
 */
export async function waitUntilReady(
  url: string,
  timeoutMs: number,
  gone: Promise<unknown>,
  pollMs = READY_POLL_MS,
): Promise<boolean> {
  let exited = false;
  gone.then(
    () => (exited = true),
    () => (exited = true),
  );
  const deadline = Date.now() + timeoutMs;
  while (!exited && Date.now() < deadline) {
    if (await answersReady(url)) return !exited;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  return false;
}
