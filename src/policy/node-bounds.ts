import type { NodeBounds } from '../domain/node-grant.ts';
import type { Dimension, Resources } from '../domain/resources.ts';
import { complete, exceeding, formatAmount } from './resources.ts';

/** What an agent declares of its node when it registers. */
export interface NodeDeclaration {
  capacity: Resources;
  gpu_model?: string | null;
  labels?: Record<string, string>;
}

/** The first way a declaration goes beyond its token's bounds. */
export type BoundsBreach =
  | { code: 'capacity'; dimension: Dimension; declared: number; most: number }
  | { code: 'gpu-model'; declared: string; allowed: string | null }
  | { code: 'label'; key: string; declared: string; allowed: string | null };

/**
 * Whether a node's declaration stays within its agent token's bounds: no dimension above the bound's
 * (a dimension the bound leaves out is 0), the bound's GPU model or none, and only the bound's labels
 * with their values. Null when it does.
 */
export function beyondBounds(declared: NodeDeclaration, bounds: NodeBounds): BoundsBreach | null {
  const dimension = exceeding(declared.capacity, complete(bounds.capacity));
  if (dimension) {
    const most = bounds.capacity[dimension] ?? 0;
    return { code: 'capacity', dimension, declared: declared.capacity[dimension] ?? 0, most };
  }
  if (declared.gpu_model && declared.gpu_model !== bounds.gpu_model)
    return { code: 'gpu-model', declared: declared.gpu_model, allowed: bounds.gpu_model ?? null };
  for (const [key, value] of Object.entries(declared.labels ?? {})) {
    const allowed = bounds.labels?.[key] ?? null;
    if (value !== allowed) return { code: 'label', key, declared: value, allowed };
  }
  return null;
}

/** The sentence of a breach, for the 403 and the audit log. */
export function breachSentence(node: string, breach: BoundsBreach): string {
  const token = `the agent token of node ${node}`;
  switch (breach.code) {
    case 'capacity':
      return `${token} allows at most ${formatAmount(breach.dimension, breach.most)}, not ${formatAmount(breach.dimension, breach.declared)}`;
    case 'gpu-model':
      return breach.allowed
        ? `${token} allows the GPU model ${breach.allowed} only, not ${breach.declared}`
        : `${token} allows no GPU model, not ${breach.declared}`;
    case 'label':
      return breach.allowed === null
        ? `${token} allows no label ${breach.key}`
        : `${token} allows the label ${breach.key}=${breach.allowed} only, not ${breach.key}=${breach.declared}`;
  }
}
