import { createRoute, z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { permits, visibility } from '../../../auth/guard.ts';
import { decisionsShown } from '../../decisions-shown.ts';
import type { ApiDeps } from '../../deps.ts';
import { errors, newRouter } from '../../openapi.ts';
import { type ChangeFeed, changeFeed, type FeedChange } from './feed.ts';

/** A comment line this often keeps proxies and browsers from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;

const eventsRoute = createRoute({
  middleware: [permits('read')] as const,
  method: 'get',
  path: '/events',
  tags: ['events'],
  summary: 'Server-sent events: decisions, replica state changes and load zone changes the caller may see',
  responses: {
    200: {
      description:
        'a stream that never ends: `ready`, then `decision`, `replica` and `load` events (docs/api.md)',
      content: { 'text/event-stream': { schema: z.string() } },
    },
    ...errors(503),
  },
});

/**
 * GET /api/v1/events: a server-sent event for each change a reader may see: `decision`, `replica`
 * (its state changed) and `load` (its load zone changed).
 */
export function eventsRouter(deps: ApiDeps, log: Pick<Console, 'warn'> = console) {
  const feed = changeFeed(deps.sql, deps.policy, deps.now ?? Date.now, log);
  const app = newRouter();
  app.openapi(eventsRoute, async (c) => {
    const [shown, shownDecision] = await Promise.all([visibility(c), decisionsShown(c)]);
    return streamSSE(c, async (stream) => {
      const unsubscribe = await listen(feed, (change) => {
        if (!shown(change.owner)) return;
        void stream.writeSSE({
          event: change.kind,
          data: JSON.stringify(shownChange(change, shownDecision)),
        });
      });
      // Only now: every change from here on is sent.
      await stream.writeSSE({ event: 'ready', data: '{}' });
      const keepAlive = setInterval(() => void stream.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
      // A client gone while the feed started has aborted already: onAbort would wait for it forever.
      if (!stream.aborted) await new Promise<void>((resolve) => stream.onAbort(resolve));
      clearInterval(keepAlive);
      unsubscribe();
    });
  });
  return app;
}

const listen = (feed: ChangeFeed, each: (change: FeedChange) => void) =>
  feed.subscribe((changes) => {
    for (const change of changes) each(change);
  });

/**
 * A change as this caller reads it: a decision as GET /models/{name}/decisions shows it, with its
 * model's name; the owner, which only chose who hears it, left out.
 */
function shownChange(change: FeedChange, shownDecision: Awaited<ReturnType<typeof decisionsShown>>) {
  switch (change.kind) {
    case 'decision':
      return { model: change.change.model, ...shownDecision(change.change.decision) };
    case 'replica': {
      const { owner: _, ...replica } = change.change;
      return replica;
    }
    case 'load':
      return change.change;
  }
}
