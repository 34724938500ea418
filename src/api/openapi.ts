import { OpenAPIHono, z } from '@hono/zod-openapi';
import { validationHook } from './http.ts';

/** Every router is an OpenAPIHono with the same validation hook, so all 400s read alike. */
export const newRouter = () => new OpenAPIHono({ defaultHook: validationHook });

export const ErrorSchema = z.object({ error: z.string() }).openapi('Error');

/**
 * Describes error answers of a route in the OpenAPI document. Every /api/v1 route may answer 401 (no
 * valid token) and 403 (the token's role may not), so those are always described.
 */
export function errors(...statuses: number[]) {
  return Object.fromEntries(
    [401, 403, ...statuses].map((status) => [
      status,
      {
        description: ERROR_TEXT[status] ?? 'error',
        content: { 'application/json': { schema: ErrorSchema } },
      },
    ]),
  );
}

const ERROR_TEXT: Record<number, string> = {
  400: 'bad input (one sentence saying what)',
  401: 'no valid bearer token (none, malformed, unknown, revoked or expired)',
  403: "the token's role may not do this (one sentence saying what it lacks)",
  404: 'no such thing',
  409: 'conflict: exists or still in use',
  413: 'body too large',
  429: 'too many: a bound on how many there may be was reached (one sentence saying which)',
  503: 'the store or Temporal is unreachable',
};

export const jsonContent = <T extends z.ZodType>(schema: T, description = 'OK') => ({
  description,
  content: { 'application/json': { schema } },
});

export const jsonRequest = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { 'application/json': { schema } },
});
