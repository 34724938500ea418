import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';

/**
 * The cookie that keeps the session's opaque ID (store/console-sessions.ts), never the token: readable
 * only by the server, sent only to /ui. Signing out deletes the session, so a copied cookie dies too.
 */
const COOKIE = 'llmgw_session';
const PATH = '/ui';
/** A browser session, at most a working day: signing in again after it costs one paste. */
export const SESSION_MAX_AGE_S = 12 * 3600;

export const sessionId = (c: Context): string | undefined => getCookie(c, COOKIE);

/**
 * Whether the browser reached the console over TLS. llmgw serves plain HTTP, so behind a proxy that
 * terminates TLS only the proxy knows: its X-Forwarded-Proto is believed when `trustProxy` says the
 * proxy writes it (LLMGW_TRUST_PROXY), and ignored otherwise, since any client can write it.
 */
export function overTls(c: Context, trustProxy: boolean): boolean {
  if (new URL(c.req.url).protocol === 'https:') return true;
  // The first of a list is the scheme the proxy nearest the browser saw.
  const forwarded = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  return trustProxy && forwarded === 'https';
}

/** HttpOnly so no script reads the ID; SameSite=Strict so no other site's page sends it; Secure over TLS. */
export function startSession(c: Context, id: string, options: { trustProxy: boolean }) {
  setCookie(c, COOKIE, id, {
    path: PATH,
    httpOnly: true,
    sameSite: 'Strict',
    secure: overTls(c, options.trustProxy),
    maxAge: SESSION_MAX_AGE_S,
  });
}

export const endSession = (c: Context) => deleteCookie(c, COOKIE, { path: PATH });
