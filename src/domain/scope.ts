/** A node of the tenancy tree: org > team > project. */
export type ScopeKind = 'org' | 'team' | 'project';
export const SCOPE_KINDS: readonly ScopeKind[] = ['org', 'team', 'project'];

/** `org:ID`, `team:ID` or `project:ID`. */
export type ScopeKey = `${ScopeKind}:${string}`;

export interface Scope {
  key: ScopeKey;
  kind: ScopeKind;
  id: string;
  name: string;
  /** The scope above it; null for an org. */
  parent: ScopeKey | null;
}

export const scopeKey = (kind: ScopeKind, id: string): ScopeKey => `${kind}:${id}`;

export function parseScopeKey(key: string): { kind: ScopeKind; id: string } | null {
  const at = key.indexOf(':');
  const kind = key.slice(0, at) as ScopeKind;
  if (at < 0 || !SCOPE_KINDS.includes(kind)) return null;
  return { kind, id: key.slice(at + 1) };
}
