import type { Context } from 'hono';
import { nameable } from '../auth/guard.ts';
import { ApiError } from '../contracts/errors.ts';
import type { Scope, ScopeKey, ScopeKind } from '../domain/scope.ts';
import { resolveScope } from '../domain/scope-names.ts';

/**
 * Resolves a scope the way every endpoint does (API.md "Conventions"), among the scopes the caller may
 * name: one outside its view is "there is no ..." (400), word for word as for a name that never existed.
 */
export async function resolveOrRefuse(c: Context, text: string, defaultKind?: ScopeKind): Promise<Scope> {
  const { scopes } = await c.get('scopeTree')();
  const resolution = resolveScope(scopes, text, defaultKind, await nameable(c));
  if ('error' in resolution) throw new ApiError(400, resolution.error);
  return resolution.scope;
}

/** The scope and every scope beneath it. */
export function subtree(scopes: readonly Scope[], root: ScopeKey): Set<ScopeKey> {
  const inside = new Set<ScopeKey>([root]);
  // Scopes come parents first (listScopes), so one walk finds every descendant.
  for (const scope of scopes) if (scope.parent && inside.has(scope.parent)) inside.add(scope.key);
  return inside;
}
