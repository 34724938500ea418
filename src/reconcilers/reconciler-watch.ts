// Client side, run by the worker: starts again the reconcilers that stopped. Not part of the workflow bundle.
import type { Sql } from '../store/db.ts';
import { modelNames } from '../store/models.ts';
import type { Reconcilers } from './client.ts';

/** How many names a log line lists before it only counts. */
const NAMED = 20;

/**
 * Every `periodMs`, starts the reconcilers of the models in the store that are not running, whatever
 * stopped them (terminated in the Temporal UI, a bug); the API starts one at its next touch of the
 * model as well. A check that fails (store or Temporal down) is logged and made again a period later.
 */
export function watchReconcilers(options: {
  sql: Sql;
  reconcilers: Reconcilers;
  periodMs: number;
  onRestarted: (models: string[]) => void;
  log: Pick<Console, 'warn'>;
}): { stop(): Promise<void> } {
  const { sql, reconcilers, log } = options;
  const check = async () => {
    const missing = await reconcilers.missing(await modelNames(sql));
    if (missing.length === 0) return;
    // Those that could not be started are logged by ensure() and found again at the next check.
    const started = await reconcilers.ensure(missing);
    if (started.length === 0) return;
    options.onRestarted(started);
    const more = started.length > NAMED ? ` and ${started.length - NAMED} more` : '';
    log.warn(
      `started the reconcilers of ${started.slice(0, NAMED).join(', ')}${more}: they were not running`,
    );
  };
  let stopped = false;
  let checking: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout;
  const schedule = () => {
    timer = setTimeout(() => {
      checking = check()
        .catch((error) => log.warn(`could not check that every model's reconciler runs: ${String(error)}`))
        .finally(() => {
          if (!stopped) schedule();
        });
    }, options.periodMs);
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await checking;
    },
  };
}
