import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** Connections to the endpoint are kept open between a client's requests, as clients of engines do. */
const agents = { http: new Agent({ keepAlive: true }), https: undefined };

/** A request that never reached the endpoint: refused, or its connection closed before any answer. */
export class ConnectionFailed extends Error {
  constructor(cause: Error & { code?: string }) {
    super(cause.code ?? cause.message, { cause });
  }
}

/**
 * POSTs a JSON body and resolves with the answer's head (its body still to read). A request lost on a
 * reused connection before any answer is sent once more on a new connection: some engines (llama.cpp's
 * server) close theirs after each streamed answer while their headers say `Keep-Alive`, so a pooled
 * socket can be dead before the engine sees the request, which says nothing of the engine. A request
 * that fails before any answer on a new connection rejects with ConnectionFailed; an abort of `signal`
 * rejects with its reason.
 */
export async function postJson(url: URL, body: string, signal: AbortSignal): Promise<IncomingMessage> {
  try {
    return await post(url, body, signal, true);
  } catch (error) {
    if (!(error instanceof StaleSocket)) throw error;
    return await post(url, body, signal, false).catch((again) => {
      throw again instanceof StaleSocket ? new ConnectionFailed(again.cause as Error) : again;
    });
  }
}

class StaleSocket extends Error {}

function post(url: URL, body: string, signal: AbortSignal, pooled: boolean): Promise<IncomingMessage> {
  const secure = url.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const outgoing = (secure ? httpsRequest : httpRequest)(url, {
      method: 'POST',
      agent: pooled ? (secure ? agents.https : agents.http) : false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      signal,
    });
    let answered = false;
    outgoing.once('response', (answer) => {
      answered = true;
      resolve(answer);
    });
    outgoing.once('error', (error: Error & { code?: string }) => {
      if (answered) return;
      if (signal.aborted) return reject(signal.reason);
      if (outgoing.reusedSocket) return reject(new StaleSocket(error.message, { cause: error }));
      reject(new ConnectionFailed(error));
    });
    outgoing.end(body);
  });
}
