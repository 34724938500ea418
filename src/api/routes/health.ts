import type { Hono } from 'hono';
import type { ApiDeps } from '../deps.ts';

/** Open to all (no credentials): liveness and readiness for load balancers and orchestrators. */
export function healthRoutes(app: Hono, deps: ApiDeps) {
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
    return c.json({ ok: true, store: 'up', temporal: 'up' });
  });
}
