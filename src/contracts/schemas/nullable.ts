import { z } from '@hono/zod-openapi';

/**
 * A named schema or null. `.nullable()` on a schema registered as a component renders as its bare
 * $ref in /openapi.json, which then refuses the null the API sends; a union keeps the null.
 */
export function nullableRef<T extends z.ZodType>(schema: T) {
  return z.union([schema, z.null()]);
}
