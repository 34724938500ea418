import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';

/** The cookie that keeps the signed-in token; readable only by the server, sent only to /ui. */
const COOKIE = 'llmgw_session';
const PATH = '/ui';
/** A browser session, at most a working day: signing in again after it costs one paste. */
const MAX_AGE_S = 12 * 3600;

export const sessionSecret = (c: Context): string | undefined => getCookie(c, COOKIE);

/** HttpOnly so no script reads the token; SameSite=Strict so no other site's page sends it; Secure over TLS. */
export function startSession(c: Context, secret: string) {
  setCookie(c, COOKIE, secret, {
    path: PATH,
    httpOnly: true,
    sameSite: 'Strict',
    secure: new URL(c.req.url).protocol === 'https:',
    maxAge: MAX_AGE_S,
  });
}

export const endSession = (c: Context) => deleteCookie(c, COOKIE, { path: PATH });
