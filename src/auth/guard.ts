import type { Context, MiddlewareHandler } from 'hono';
import { ApiError } from '../contracts/errors.ts';
import { type Action, type Identity, type Label, may, sees, type Verdict } from '../contracts/permissions.ts';
import type { Scope, ScopeKey } from '../domain/scope.ts';
import { scopeChain, scopeLabel } from '../domain/scope-names.ts';

/** The tenancy tree as permissions need it: its scopes, a scope's chain and how sentences name it. */
export interface ScopeTree {
  scopes: readonly Scope[];
  chain(key: ScopeKey | null): readonly ScopeKey[];
  label: Label;
}

declare module 'hono' {
  interface ContextVariableMap {
    /** The caller, found by authenticate() from its bearer token. */
    identity: Identity;
    /** The tenancy tree, read from the store at most once per request and only when asked for. */
    scopeTree: () => Promise<ScopeTree>;
  }
}

export function scopeTree(scopes: readonly Scope[]): ScopeTree {
  const byKey = new Map(scopes.map((scope) => [scope.key, scope]));
  return {
    scopes,
    chain: (key) => (key === null ? [] : scopeChain(byKey, key)),
    label: (key) => scopeLabel(byKey, key),
  };
}

export const identityOf = (c: Context): Identity => c.get('identity');

/**
 * Declared by each /api/v1 route: refuses (403) a role that may never do the action, before the request
 * is read, so that a role without the right learns nothing about the things it names.
 */
export function permits(action: Action): MiddlewareHandler {
  return async (c, next) => {
    const who = identityOf(c);
    // Asked again with the tree only when refused, so that the sentence names the caller's scope.
    if (!may(who, action).allowed) forbid(may(who, action, undefined, (await c.get('scopeTree')()).label));
    await next();
  };
}

/**
 * Declared by the routes of one node (`/nodes/{name}...`): refuses (403) a role that may never do the
 * action, and an agent acting for a node that is not its own.
 */
export function permitsNode(action: Action): MiddlewareHandler {
  return async (c, next) => {
    const who = identityOf(c);
    const target = { chain: [], node: c.req.param('name') };
    if (!may(who, action, target).allowed)
      forbid(may(who, action, target, (await c.get('scopeTree')()).label));
    await next();
  };
}

/** Refuses (403) unless the caller may do the action to what this scope owns (null: none) or to this model. */
export async function authorize(
  c: Context,
  action: Action,
  on: { scope: ScopeKey | null; model?: string },
): Promise<void> {
  const who = identityOf(c);
  // Only a token bound to a scope is decided by the chain: spare the others (every load report) the read.
  if (who.scope === null) return forbid(may(who, action, { chain: [], model: on.model }));
  const tree = await c.get('scopeTree')();
  const target = { chain: tree.chain(on.scope), model: on.model };
  forbid(may(who, action, target, tree.label));
}

/** The one filter of what a caller sees: whether it may read what this scope owns (null: owned by none). */
export async function visibility(c: Context): Promise<(owner: ScopeKey | null) => boolean> {
  const who = identityOf(c);
  if (who.scope === null) return () => sees(who, []);
  const tree = await c.get('scopeTree')();
  return (owner) => sees(who, tree.chain(owner));
}

/**
 * The scopes a caller may name: those it sees, and those above its own scope (its own scope's path
 * names them). Any other resolves as if it did not exist, so that no answer tells it apart from a
 * missing one.
 */
export async function nameable(c: Context): Promise<(key: ScopeKey) => boolean> {
  const who = identityOf(c);
  const tree = await c.get('scopeTree')();
  const above = new Set(tree.chain(who.scope));
  return (key) => above.has(key) || sees(who, tree.chain(key));
}

function forbid(verdict: Verdict) {
  if (!verdict.allowed) throw new ApiError(403, verdict.why);
}
