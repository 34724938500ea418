import { type Context, Hono } from 'hono';
import { csrf } from 'hono/csrf';
import { identifyHash, sourceAddress } from '../auth/authenticate.ts';
import type { AuthFailures } from '../auth/failures.ts';
import { scopeTree } from '../auth/guard.ts';
import { type Identity, may } from '../contracts/permissions.ts';
import { hashSecret } from '../contracts/secrets.ts';
import { createSession, deleteSession, SESSION_ID, sessionToken } from '../store/console-sessions.ts';
import type { Sql } from '../store/db.ts';
import { listScopes } from '../store/tenancy.ts';
import { type ApiFetch, ApiRefusal, apiAs } from './api-client.ts';
import { assetRoutes } from './assets.ts';
import { neededFor, Page, Problem, type Viewer } from './layout.tsx';
import { modelPage } from './model-page.tsx';
import { modelsPage } from './models-page.tsx';
import { nodesPage } from './nodes-page.tsx';
import type { PageContext } from './page-context.ts';
import { quotaPreviewPage } from './quota-preview-page.tsx';
import { runtimesPage } from './runtimes-page.tsx';
import { endSession, SESSION_MAX_AGE_S, sessionId, startSession } from './session.ts';
import { SignInPage } from './sign-in-page.tsx';
import { treePage } from './tree-page.tsx';

/** What the console reads itself (sessions, tokens, scopes); every figure it shows comes from the API. */
export interface ConsoleDeps {
  sql: Sql;
  now?: () => number;
}

export interface ConsoleOptions {
  /** The Temporal UI's page of the namespace's workflows, e.g. http://localhost:8233/namespaces/default/workflows. */
  temporalWorkflows: string;
  /** Where a refused sign-in is counted and logged, as the API's refused requests are. */
  failures: AuthFailures;
  /** A proxy in front terminates TLS and says so in X-Forwarded-Proto (LLMGW_TRUST_PROXY): the cookie is then Secure. */
  trustProxy: boolean;
}

const CONTENT_SECURITY_POLICY =
  "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; form-action 'self'";

type Env = { Variables: { page: Omit<PageContext, 'query' | 'status' | 'now'> } };

/**
 * The web console at /ui: server-rendered pages drawn from the API's own answers to the signed-in
 * token (`api`, the app's fetch), so that each page shows what the API shows that token.
 */
export function consoleRouter(deps: ConsoleDeps, api: ApiFetch, options: ConsoleOptions) {
  const now = deps.now ?? Date.now;
  const app = new Hono<Env>();
  // The browser itself holds the console to its own files: nothing loads from elsewhere, no other
  // site frames it, its forms post only to it. Bars set their widths inline, hence style attributes.
  app.use('*', async (c, next) => {
    await next();
    c.header('content-security-policy', CONTENT_SECURITY_POLICY);
  });
  app.route('/assets', assetRoutes());
  // Forms post only from the console's own pages (Origin and Sec-Fetch-Site are checked).
  app.use('*', csrf());

  app.get('/', (c) => c.redirect(sessionId(c) ? '/ui/models' : '/ui/sign-in', 303));
  app.get('/sign-in', (c) => c.html(<SignInPage />));
  app.post('/sign-in', async (c) => {
    const form = await c.req.parseBody();
    const secret = typeof form.token === 'string' ? form.token.trim() : '';
    if (!secret) return c.html(<SignInPage problem="give a token" />, 400);
    const hash = hashSecret(secret);
    const found = await signedIn(deps, hash, now());
    // Counted and logged as the API counts a refused token, so that guessing here is seen as well.
    if ('refused' in found) {
      const from = sourceAddress(c);
      if (found.refused === 'unknown') options.failures.refused('unknown', from);
      else options.failures.expired(found.token, from);
    }
    if ('status' in found) return c.html(<SignInPage problem={found.why} />, found.status);
    startSession(c, await createSession(deps.sql, hash, SESSION_MAX_AGE_S, now()), options);
    return c.redirect('/ui/tree', 303);
  });
  app.post('/sign-out', async (c) => {
    const id = sessionId(c);
    if (id && SESSION_ID.test(id)) await deleteSession(deps.sql, id);
    endSession(c);
    return c.redirect('/ui/sign-in', 303);
  });

  // Every other page needs a session whose token is still valid: the store is asked on each request,
  // so a revoked token signs the console out at once, as it stops the API.
  app.use('*', async (c, next) => {
    const id = sessionId(c);
    const hash = id && SESSION_ID.test(id) ? await sessionToken(deps.sql, id, now()) : null;
    const found = hash ? await signedIn(deps, hash, now()) : undefined;
    if (!id || !found || 'status' in found) {
      endSession(c);
      return c.redirect('/ui/sign-in', 303);
    }
    const { temporalWorkflows } = options;
    c.set('page', {
      api: apiAs(api, `Session ${id}`),
      viewer: found.viewer,
      sql: deps.sql,
      temporalWorkflows,
    });
    await next();
  });

  const page =
    (draw: (ctx: PageContext, name: string) => Promise<unknown>, path: string) => async (c: Context<Env>) => {
      const base = c.get('page');
      // The API would refuse the page's reads all the same; this says so before any is made.
      const verdict = may(base.viewer.who, neededFor(path));
      if (!verdict.allowed) throw new ApiRefusal(403, verdict.why);
      let status = 200;
      const ctx: PageContext = {
        ...base,
        query: c.req.query(),
        now: now(),
        status: (code) => (status = code),
      };
      const body = await draw(ctx, c.req.param('name') ?? '');
      return c.html(body as string, status as 200);
    };
  app.get('/tree', page(treePage, '/ui/tree'));
  app.get('/models', page(modelsPage, '/ui/models'));
  app.get('/models/:name', page(modelPage, '/ui/models'));
  app.get('/nodes', page(nodesPage, '/ui/nodes'));
  app.get('/runtimes', page(runtimesPage, '/ui/runtimes'));
  app.get('/quota-preview', page(quotaPreviewPage, '/ui/quota-preview'));
  // The browser's EventSource cannot send a bearer header: the session's token is sent for it.
  app.get('/events', (c) => c.get('page').api.stream('/api/v1/events'));

  app.onError((error, c) => {
    if (!(error instanceof ApiRefusal)) throw error;
    if (error.status === 401) {
      endSession(c);
      return c.redirect('/ui/sign-in', 303);
    }
    const viewer = c.get('page')?.viewer;
    return c.html(
      <Page title="Not shown" viewer={viewer}>
        <Problem sentence={error.message} />
      </Page>,
      error.status as 400,
    );
  });
  return app;
}

/**
 * The viewer a token signs in as, or why it may not: unknown or expired (401, answered alike, as the
 * API answers them), or a role that reads nothing (403).
 */
async function signedIn(
  deps: ConsoleDeps,
  tokenHash: Buffer,
  now: number,
): Promise<
  | { viewer: Viewer }
  | ({ status: 401; why: string } & Exclude<Awaited<ReturnType<typeof identifyHash>>, { identity: unknown }>)
  | { status: 403; why: string }
> {
  const found = await identifyHash(deps.sql, tokenHash, now);
  if ('refused' in found)
    return { status: 401, why: 'this token is unknown, was revoked or expired', ...found };
  const tree = scopeTree(await listScopes(deps.sql));
  const verdict = may(found.identity, 'read', undefined, tree.label);
  if (!verdict.allowed) return { status: 403, why: `the console only reads: ${verdict.why}` };
  return { viewer: { who: found.identity, described: described(found.identity, tree.label) } };
}

/** `viewer of team Acme / ml`, `admin`. */
const described = (who: Identity, label: (key: NonNullable<Identity['scope']>) => string) =>
  who.scope ? `${who.role} of ${label(who.scope)}` : who.role;
