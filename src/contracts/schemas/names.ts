import { z } from '@hono/zod-openapi';

/** Names of orgs, teams and projects: what a person types, without `/` or `:` (they separate paths). */
export const ScopeNameSchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9][A-Za-z0-9 _.-]{0,62}$/, {
    error: 'must be 1 to 63 letters, digits, spaces, ".", "_" or "-", starting with a letter or digit',
  });

/** Names of models and nodes: they appear in workflow IDs, URLs and metrics labels. */
export const ObjectNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, {
  error: 'must be 1 to 63 letters, digits, ".", "_" or "-", starting with a letter or digit',
});

/** A scope as callers write it: `team:Acme/ml`, `team:ID`, `team:ml`. */
export const ScopeRefSchema = z.string().min(1).max(300).openapi({
  example: 'team:Acme/ml',
  description: 'org:X, team:X or project:X; X is the ID, the path or its last segment',
});

/** The `{name}` of a path that names a model or a node. */
export const NameParam = z.object({ name: ObjectNameSchema });
