import type { Client } from '@temporalio/client';
// Client side: how the API, the worker and the drivers tell reconcilers. Not part of the workflow bundle.
import { deletedSignal, reconcilerId, type WakeSignal, wakeSignals } from './messages.ts';
import type { reconcileModel } from './reconcile-model.ts';

/** Tells models' reconcilers that something they decide on changed. */
export interface Reconcilers {
  tell(models: readonly string[], why: WakeSignal | 'deleted'): Promise<void>;
}

/**
 * signalWithStart, so a missing reconciler is started rather than an error. A failure is logged and
 * not thrown: the change is already stored, and every reconciler resyncs from the store on its timer
 * (the worker starts missing ones when it starts).
 */
export function temporalReconcilers(
  client: Client,
  taskQueue: string,
  log: Pick<Console, 'warn'> = console,
): Reconcilers {
  return {
    async tell(models, why) {
      const signal = why === 'deleted' ? deletedSignal : wakeSignals[why];
      const results = await Promise.allSettled(
        models.map((model) =>
          client.workflow.signalWithStart<typeof reconcileModel, []>('reconcileModel', {
            workflowId: reconcilerId(model),
            taskQueue,
            args: [{ model }],
            signal,
          }),
        ),
      );
      const failed = results.filter((result) => result.status === 'rejected');
      if (failed.length > 0) {
        log.warn(`could not tell ${failed.length} reconciler(s) (${why}): ${String(failed[0].reason)}`);
      }
    },
  };
}
