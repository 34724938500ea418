import type { Child } from 'hono/jsx';
import { type Action, type Identity, may } from '../contracts/permissions.ts';

/** The console's pages, each shown in the menu only to a token whose role may read what it shows. */
const PAGES: { path: string; title: string; needs: Action }[] = [
  { path: '/ui/tree', title: 'Tree', needs: 'read' },
  { path: '/ui/models', title: 'Models', needs: 'read' },
  { path: '/ui/nodes', title: 'Nodes', needs: 'read-cluster' },
  { path: '/ui/runtimes', title: 'Runtimes', needs: 'read-cluster' },
  { path: '/ui/quota-preview', title: 'Quota preview', needs: 'change-quota' },
];

/** What a token's role must be allowed to open the page at `path` (a model's page: what Models needs). */
export const neededFor = (path: string): Action => PAGES.find((page) => page.path === path)?.needs ?? 'read';

export interface Viewer {
  who: Identity;
  /** `viewer of team Acme / ml`, `admin`: the role, and the scope it is bound to. */
  described: string;
}

/** Every page: its title, the menu, who is signed in (and a way out), and `main`, which live.js refreshes. */
export function Page(props: {
  title: string;
  viewer?: Viewer;
  path?: string;
  /** Refreshed in place on each change the events stream reports (with JavaScript on). */
  live?: boolean;
  children: Child;
}) {
  const { viewer } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · llmgw`}</title>
        <link rel="stylesheet" href="/ui/assets/console.css" />
        {props.live ? <script src="/ui/assets/live.js" defer /> : null}
      </head>
      <body>
        <header>
          <a class="brand" href="/ui">
            llmgw
          </a>
          {viewer ? (
            <nav>
              {PAGES.filter((page) => may(viewer.who, page.needs).allowed).map((page) => (
                <a href={page.path} aria-current={page.path === props.path ? 'page' : undefined}>
                  {page.title}
                </a>
              ))}
            </nav>
          ) : null}
          {viewer ? (
            <form class="who" method="post" action="/ui/sign-out">
              <span>
                {viewer.who.name}, {viewer.described}
              </span>
              <button type="submit">Sign out</button>
            </form>
          ) : null}
        </header>
        <main id="main" data-live={props.live ? 'on' : undefined}>
          <h1>{props.title}</h1>
          {props.children}
        </main>
      </body>
    </html>
  );
}

/** A refusal or bad input, in the one sentence the API (or the console) gave. */
export function Problem(props: { sentence: string }) {
  return (
    <p class="problem" role="alert">
      {props.sentence}
    </p>
  );
}
