import { type Client, WorkflowNotFoundError } from '@temporalio/client';
// Client side: how the API, the worker and the drivers tell reconcilers. Not part of the workflow bundle.
import { deletedSignal, reconcilerId, type WakeSignal, wakeSignals } from '../workflows/messages.ts';
import type { reconcileModel } from '../workflows/reconcile-model.ts';

/** Tells models' reconcilers that something they decide on changed, and starts those that are not running. */
export interface Reconcilers {
  tell(models: readonly string[], why: WakeSignal | 'deleted'): Promise<void>;
  /** Starts the reconcilers of these models that are not running; a running one hears nothing. */
  ensure(models: readonly string[]): Promise<string[]>;
  /** Of these models, those whose reconciler is not running (terminated in the Temporal UI, a bug). */
  missing(models: readonly string[]): Promise<string[]>;
}

/**
 * signalWithStart, so a missing reconciler is started rather than an error. A failure is logged and
 * not thrown: the change is already stored, and every reconciler resyncs from the store on its timer
 * (the worker starts missing ones when it starts, and looks for them periodically).
 */
export function temporalReconcilers(
  client: Client,
  taskQueue: string,
  log: Pick<Console, 'warn'> = console,
): Reconcilers {
  /** Runs `op` for each model; logs the failures and returns the models it succeeded for. */
  const each = async (models: readonly string[], what: string, op: (model: string) => Promise<unknown>) => {
    const results = await Promise.allSettled(models.map(op));
    const failed = results.filter((result) => result.status === 'rejected');
    if (failed.length > 0) {
      log.warn(`could not ${what} ${failed.length} reconciler(s): ${String(failed[0].reason)}`);
    }
    return models.filter((_, i) => results[i].status === 'fulfilled');
  };
  const running = async (model: string) => {
    try {
      return (await client.workflow.getHandle(reconcilerId(model)).describe()).status.name === 'RUNNING';
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
  };
  return {
    async tell(models, why) {
      const signal = why === 'deleted' ? deletedSignal : wakeSignals[why];
      await each(models, `tell (${why})`, (model) =>
        client.workflow.signalWithStart<typeof reconcileModel, []>('reconcileModel', {
          workflowId: reconcilerId(model),
          taskQueue,
          args: [{ model }],
          signal,
        }),
      );
    },
    ensure(models) {
      // USE_EXISTING: a running reconciler is left as it is, and nothing is added to its history.
      return each(models, 'start', (model) =>
        client.workflow.start<typeof reconcileModel>('reconcileModel', {
          workflowId: reconcilerId(model),
          taskQueue,
          args: [{ model }],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      );
    },
    async missing(models) {
      const listed = new Set<string>();
      for await (const workflow of client.workflow.list({
        query: `TaskQueue = "${taskQueue}" AND ExecutionStatus = "Running"`,
      })) {
        listed.add(workflow.workflowId);
      }
      // The list is eventually consistent (a reconciler started a moment ago may not be in it yet):
      // those it leaves out are asked one by one.
      const unlisted = models.filter((model) => !listed.has(reconcilerId(model)));
      const answers = await Promise.all(unlisted.map(running));
      return unlisted.filter((_, i) => !answers[i]);
    },
  };
}
