import type { Resources } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import type { Snapshot } from '../domain/snapshot.ts';
import { borrowedByScope } from './guarantee.ts';
import { holdings } from './holdings.ts';
import { type View, viewOf } from './view.ts';

export interface ScopeFigures {
  holds: Resources;
  borrowed: Resources;
}

/** What every scope holds and borrows (all dimensions, zero when nothing): the quota list and the tree. */
export function scopeFigures(input: Snapshot | View): Map<ScopeKey, ScopeFigures> {
  const view = viewOf(input);
  const holds = holdings(view);
  const borrowed = borrowedByScope(view);
  const figures = new Map<ScopeKey, ScopeFigures>();
  for (const key of view.scopes.keys())
    figures.set(key, { holds: holds.get(key)!, borrowed: borrowed.get(key)! });
  return figures;
}
