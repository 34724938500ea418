import type { Resources } from './resources.ts';
import type { ScopeKey } from './scope.ts';

/** Guaranteed and limited capacity of one scope; either may be absent. */
export interface Quota {
  scope: ScopeKey;
  guarantee?: Resources;
  limit?: Resources;
}
