/**
 * The client's side of one forwarded request, what proxy.ts and upstream-attempt.ts write its answer to:
 * node:http's ServerResponse is one (a connection node:http serves), http1-front.ts's FrontAnswer the
 * other. Only what the gateway uses, with ServerResponse's meaning.
 */
export interface ClientAnswer {
  /** The connection is gone, or the answer was destroyed: nothing written reaches the client. */
  readonly destroyed: boolean;
  readonly headersSent: boolean;
  /** The whole answer was written: a 'close' after it is not the client leaving. */
  readonly writableFinished: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  /** False when the connection's buffer is full: 'drain' says when to write again. */
  write(chunk: Buffer | string): boolean;
  end(chunk?: Buffer | string): unknown;
  destroy(): unknown;
  /** Holds what is written until `uncork`, so that it leaves in one write (as a socket's cork). */
  cork(): void;
  uncork(): void;
  on(event: 'drain' | 'close', listener: () => void): unknown;
  once(event: 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
}

/** What the gateway reads of a forwarded request's head; its body is read whole before it is routed. */
export interface ClientRequestHead {
  url: string;
  authorization: string | undefined;
  requestId: string | undefined;
}
