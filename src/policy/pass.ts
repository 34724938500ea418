import type { Decision } from '../domain/decision.ts';
import { type ModelMemory, memoryAfter } from '../domain/snapshot.ts';
import { decideBurst } from './burst.ts';
import { resyncAfter } from './resync.ts';
import type { View } from './view.ts';

/** What one reconciler pass decides on a view, before it reserves, starts or drains anything. */
export interface PassDecisions {
  /** The model's decision. */
  decision: Decision;
  /** The places that follow a place in the same pass (policy/burst.ts). */
  alsoPlace: Decision[];
  /** Replicas to drain with the decision's own, when a bursty model's load has clearly fallen (burst.ts). */
  alsoRemove: string[];
  /** Reserved (pending) replicas of the model: each starts once its node admits it (startRefusal). */
  startable: string[];
  /** How long the reconciler waits untold before its next pass (policy/resync.ts). */
  resyncMs: number;
  /** The memory the reconciler carries to its next pass. */
  memory: ModelMemory;
}

/**
 * One reconciler pass on a view, with the model's memory (its profiles' backoff as read for this pass):
 * what the planPass activity answers the workflow, and what the simulator's reconcilers act on
 * (src/simulate/llmgw.ts), so the two share every rule of a pass.
 */
export function decidePass(
  view: View,
  modelName: string,
  memory: ModelMemory,
  resyncMs: number,
): PassDecisions {
  const [first, ...also] = decideBurst(view, modelName, memory);
  const removing = first.action === 'remove';
  const alsoRemove = removing ? also.map((d) => d.replica!) : [];
  const decision =
    alsoRemove.length > 0
      ? { ...first, reason: `${first.reason}; and ${alsoRemove.length} more: ${alsoRemove.join(', ')}` }
      : first;
  return {
    decision,
    alsoPlace: removing ? [] : also,
    alsoRemove,
    startable: view
      .replicasOfModel(modelName)
      .filter((r) => r.state === 'pending')
      .map((r) => r.id),
    resyncMs: resyncAfter(view, decision, resyncMs, memory.backedOffUntil),
    memory: memoryAfter(memory, decision.memory, memory.backedOffUntil),
  };
}
