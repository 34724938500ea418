import type { Context, MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import { ApiError, describeIssue, errorBody } from '../contracts/errors.ts';

/** The hook every route's validation reports through: 400 with one sentence. */
export function validationHook(result: { success: boolean; error?: z.ZodError }, c: Context) {
  if (!result.success && result.error) {
    return c.json(errorBody(describeIssue(result.error.issues[0])), 400);
  }
}

/**
 * Bounds and parses a JSON body before validation, so that a too large or malformed body gets its own
 * clear answer (and never reaches a handler). Every body is read as JSON whatever its Content-Type, as
 * the original API did: plain `curl -d` sends application/x-www-form-urlencoded.
 */
export function jsonBody(maxBytes: number): MiddlewareHandler {
  return async (c, next) => {
    const declared = Number(c.req.header('content-length') ?? Number.NaN);
    if (declared > maxBytes) throw tooLarge(maxBytes);
    const text = new TextDecoder().decode(await readAtMost(c, maxBytes));
    try {
      JSON.parse(text);
    } catch (error) {
      throw new ApiError(400, `the request is not valid JSON: ${(error as Error).message}`);
    }
    // The route's validators take only `application/json` (Hono's own 415 otherwise): the body goes on
    // as that, so that this check alone decides what is JSON.
    const headers = new Headers(c.req.raw.headers);
    headers.set('content-type', 'application/json');
    c.req.raw = new Request(c.req.url, {
      method: c.req.method,
      headers,
      body: text,
      signal: c.req.raw.signal,
    });
    await next();
  };
}

/**
 * The body, read only up to `maxBytes`: a body sent without a length (chunked) is stopped there rather
 * than held in memory whole, however large it is. The connection is closed after the answer, since
 * the rest of such a body is never read.
 */
async function readAtMost(c: Context, maxBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = c.req.raw.clone().body?.getReader();
  for (let part = await reader?.read(); part && !part.done; part = await reader?.read()) {
    size += part.value.byteLength;
    if (size > maxBytes) {
      // Not cancelled: a branch of a cloned body cancels only with the other, which is never read.
      c.header('connection', 'close');
      throw tooLarge(maxBytes);
    }
    chunks.push(part.value);
  }
  return Buffer.concat(chunks);
}

const tooLarge = (maxBytes: number) =>
  new ApiError(
    413,
    `the body is larger than ${Math.round(maxBytes / 1024)} KiB, the most this endpoint takes`,
  );
