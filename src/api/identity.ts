import type { Context } from 'hono';

/**
 * Who made a change, for `updated_by`. Until tokens exist it is the `X-Llmgw-User` header, else "anonymous".
 */
export function updatedBy(c: Context): string {
  const user = c.req.header('x-llmgw-user')?.trim();
  return user && /^[\w.@ -]{1,100}$/.test(user) ? user : 'anonymous';
}
