import type { Hono } from 'hono';
import type { ApiDeps } from '../deps.ts';

/**
 * Open to all (no credentials): liveness and readiness for load balancers and orchestrators. Readiness
 * also counts the models whose reconciler is not running (a count only: no credentials, no names).
 */
export function healthRoutes(
  app: Hono,
  deps: ApiDeps,
  looks: {
    missingReconcilers: () => Promise<number>;
    /** llmgw's search attributes the Temporal namespace lacks. */
    missingSearchAttributes: () => Promise<string[]>;
  },
) {
  app.get('/healthz', (c) => c.json({ ok: true }));
  app.get('/readyz', async (c) => {
    const [store, temporal] = await Promise.all([
      deps.sql`select 1`.then(
        () => true,
        () => false,
      ),
      deps.temporalReachable().catch(() => false),
    ]);
    const down = [store ? null : 'the store (Postgres)', temporal ? null : 'Temporal'].filter(Boolean);
    if (down.length > 0)
      return c.json({ error: `${down.join(' and ')} ${down.length > 1 ? 'are' : 'is'} unreachable` }, 503);
    // Without them every reconciler's workflow task fails: models would wait for ever while this API serves.
    const lacking = await looks.missingSearchAttributes().catch(() => null);
    if (lacking === null) return c.json({ error: 'Temporal did not list its search attributes' }, 503);
    if (lacking.length > 0) {
      return c.json(
        {
          error: `Temporal's namespace lacks llmgw's search attributes ${lacking.join(', ')}, so no reconciler can run; \`llmgw worker\` registers them at start where the server allows it`,
        },
        503,
      );
    }
    // Reported, not unready: this API serves, and the worker starts those reconcilers again.
    const missing = await looks.missingReconcilers().catch(() => undefined);
    return c.json({ ok: true, store: 'up', temporal: 'up', reconcilers_missing: missing });
  });
}
