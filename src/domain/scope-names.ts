import { quoted, trimSpace } from './go-strings.ts';
import { parseScopeKey, type Scope, type ScopeKey, type ScopeKind } from './scope.ts';

/** The scope, then its parent, up to its org; [] for a scope that does not exist. */
export function scopeChain(byKey: ReadonlyMap<ScopeKey, Scope>, key: ScopeKey): ScopeKey[] {
  const chain: ScopeKey[] = [];
  for (let scope = byKey.get(key); scope; scope = scope.parent ? byKey.get(scope.parent) : undefined) {
    chain.push(scope.key);
  }
  return chain;
}

/** Names of a scope from the org down: ['Acme', 'ml', 'training']. */
export function scopeSegments(byKey: ReadonlyMap<ScopeKey, Scope>, key: ScopeKey): string[] {
  return scopeChain(byKey, key)
    .map((inChain) => byKey.get(inChain)?.name ?? '')
    .reverse();
}

/**
 * How every sentence names a scope, decisions and API answers alike: `team Acme / ml`, `org Beta`,
 * `project Acme/ml/training` (its key when it does not exist).
 */
export function scopeLabel(byKey: ReadonlyMap<ScopeKey, Scope>, key: ScopeKey): string {
  const kind = byKey.get(key)?.kind;
  return kind ? `${kind} ${displayName(byKey, key)}` : key;
}

/** How people name scopes: org `Acme`, team `Acme / ml`, project `Acme/ml/training`. */
export function displayName(byKey: ReadonlyMap<ScopeKey, Scope>, key: ScopeKey): string {
  const segments = scopeSegments(byKey, key);
  if (segments.length === 0) return key;
  return byKey.get(key)?.kind === 'team' ? segments.join(' / ') : segments.join('/');
}

const KIND_WORDS: Record<ScopeKind, string> = { org: 'org', team: 'team', project: 'project' };

export type Resolution = { scope: Scope } | { error: string };

const normalize = (segment: string) => trimSpace(segment).toLowerCase();

/**
 * Resolves `org:X`, `team:X` or `project:X`, where X is the ID, the path (`Acme/ml/training`: case and
 * spaces around `/` do not matter) or its trailing segments alone where they are unique (`team:ml`).
 * `defaultKind` lets a field that can only hold one kind take the bare name (`"org": "Acme"`).
 * Only the scopes `known` lets through are candidates: any other resolves (and is counted, for "could
 * be any of") as if it did not exist.
 * As in the original API, spaces around the text do not count, a path of the wrong depth is a scope
 * that does not exist (not a malformed one), and names are quoted as Go's %q quotes them.
 */
export function resolveScope(
  scopes: readonly Scope[],
  text: string,
  defaultKind?: ScopeKind,
  known: (key: ScopeKey) => boolean = () => true,
): Resolution {
  const trimmed = trimSpace(text);
  const parsed =
    parseScopeKey(trimmed) ??
    (defaultKind && !trimmed.includes(':') ? { kind: defaultKind, id: trimmed } : null);
  if (!parsed || parsed.id === '') {
    return { error: `${quoted(text)} is not org:NAME, team:ORG/TEAM or project:ORG/TEAM/PROJECT` };
  }
  const { kind, id: wanted } = parsed;
  const ofKind = scopes.filter((scope) => scope.kind === kind && known(scope.key));
  const byId = ofKind.find((scope) => scope.id === wanted);
  if (byId) return { scope: byId };

  const segments = wanted.split('/').map(normalize);
  const byKey = new Map(scopes.map((scope) => [scope.key, scope]));
  const matches = ofKind.filter((scope) => {
    const path = scopeSegments(byKey, scope.key).map(normalize);
    // A path deeper than the scope's compares its extra segments with nothing: no match.
    return segments.every((segment, i) => path[path.length - segments.length + i] === segment);
  });
  const plural = `${KIND_WORDS[kind]}s`;
  if (matches.length === 1) return { scope: matches[0] };
  if (matches.length > 1) {
    return { error: `${quoted(wanted)} could be any of ${matches.length} ${plural}; give its ID` };
  }
  return { error: `there is no ${KIND_WORDS[kind]} ${quoted(wanted)}` };
}
