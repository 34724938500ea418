import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { Decision } from '../domain/decision.ts';

/** Why a reconciler wakes up besides its resync timer. The API and the drivers send these. */
export const WAKE_SIGNALS = [
  'quotaChanged',
  'ownerChanged',
  'loadChanged',
  'measurementChanged',
  'specChanged',
  'replicaChanged',
] as const;
export type WakeSignal = (typeof WAKE_SIGNALS)[number];

export const wakeSignals = Object.fromEntries(
  WAKE_SIGNALS.map((name) => [name, defineSignal(name)]),
) as Record<WakeSignal, ReturnType<typeof defineSignal<[]>>>;
/** A replica of this model was reclaimed for another scope; the argument says why. */
export const reclaimedSignal = defineSignal<[string]>('reclaimed');
/** The model was deleted: drain its replicas, then end. */
export const deletedSignal = defineSignal('deleted');

export interface ReconcilerView {
  model: string;
  status: string;
  passes: number;
  lastDecision: Pick<Decision, 'action' | 'reason' | 'pending'> | null;
  /** What the last decision waits for, as codes; its reason says it in words. */
  pendingReason: Decision['pending'] | null;
  notes: string[];
}
export const stateQuery = defineQuery<ReconcilerView>('state');

export const reconcilerId = (model: string) => `reconcile:${model}`;
