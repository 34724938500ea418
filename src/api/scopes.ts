import type { Scope, ScopeKey, ScopeKind } from '../domain/scope.ts';
import { resolveScope } from '../domain/scope-names.ts';
import type { Sql } from '../store/db.ts';
import { listScopes } from '../store/tenancy.ts';
import { ApiError } from './http.ts';

/** Resolves a scope the way every endpoint does (API.md "Conventions"), or answers 400. */
export async function resolveOrRefuse(sql: Sql, text: string, defaultKind?: ScopeKind): Promise<Scope> {
  const resolution = resolveScope(await listScopes(sql), text, defaultKind);
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
