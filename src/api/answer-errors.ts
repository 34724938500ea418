import type { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { ApiError, errorBody } from '../contracts/errors.ts';
import { Conflict, InvalidInput, NotFound, TooMany } from '../domain/errors.ts';
import { isConnectionError, isUnstorableText, StoreUnavailable } from '../store/db.ts';

/**
 * How the API answers what no route answers: a path it lacks (404) and anything thrown, as
 * `{"error": "<one sentence>"}`. A 4xx carries the sentence it was thrown with; a 5xx says no more than
 * where to look, and the error itself goes to the log.
 */
export function answerErrors(app: Hono, log: Pick<Console, 'error'>) {
  app.notFound((c) => c.json(errorBody(`there is no ${c.req.method} ${c.req.path}; see /docs`), 404));
  app.onError((error, c) => {
    if (error instanceof ApiError) return c.json(errorBody(error.message), error.status);
    // Hono's answer to a body route's media type; jsonBody answers first, this is in case one lacks it.
    if (error instanceof HTTPException && error.status === 415) {
      return c.json(errorBody('send the body as JSON, with Content-Type: application/json'), 400);
    }
    if (error instanceof HTTPException)
      return c.json(errorBody(error.message || 'the request was refused'), error.status);
    if (error instanceof InvalidInput) return c.json(errorBody(error.message), 400);
    if (error instanceof NotFound) return c.json(errorBody(error.message), 404);
    if (error instanceof Conflict) return c.json(errorBody(error.message), 409);
    if (error instanceof TooMany) return c.json(errorBody(error.message), 429);
    if (isUnstorableText(error)) {
      return c.json(
        errorBody('the request holds a character the store cannot keep (such as NUL); remove it'),
        400,
      );
    }
    if (error instanceof StoreUnavailable || isConnectionError(error)) {
      return c.json(errorBody('the store (Postgres) is unreachable; try again shortly'), 503);
    }
    log.error(`${c.req.method} ${c.req.path} failed:`, error);
    return c.json(errorBody('the request failed inside llmgw; the error is in its log'), 500);
  });
}
