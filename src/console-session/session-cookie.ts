import type { Request, Response } from 'express';
import { PATHS } from '../shared/paths';

/**
 * The cookie that carries the console's refresh token across reloads: HttpOnly (no script reads it),
 * SameSite=Strict (no other site's page or link sends it), sent to the session route's path alone,
 * and Secure unless the console is served over plain HTTP on a loopback address, where a browser has
 * no HTTPS to offer and nothing crosses a network. Under HTTPS its name carries the __Secure- prefix,
 * so a plain-HTTP page of the same host cannot plant one of its own in its place.
 */

const LOOPBACK_HOSTNAMES = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\]|::1)$/i;

/** Whether the browser reached the console at a loopback address (Host, or X-Forwarded-Host behind a trusted proxy). */
export const onLoopback = (req: Request) => LOOPBACK_HOSTNAMES.test(req.hostname ?? '');

/** Plain HTTP away from loopback: a browser drops a Secure cookie set there, so the console keeps its session in memory. */
export const cookieUnusable = (req: Request) => !req.secure && !onLoopback(req);

const secure = (req: Request) => req.secure || !onLoopback(req);
const nameFor = (req: Request) => (secure(req) ? '__Secure-console_session' : 'console_session');

function options(req: Request) {
  return { path: PATHS.consoleSession, httpOnly: true, sameSite: 'strict', secure: secure(req) } as const;
}

/** The refresh token the request's cookie carries, if any. */
export function sessionCookieOf(req: Request): string | undefined {
  const name = nameFor(req);
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim() || undefined;
  }
  return undefined;
}

/** Keeps `refreshToken` in the cookie for as long as it is valid. */
export function setSessionCookie(req: Request, res: Response, refreshToken: string, seconds: number): void {
  res.cookie(nameFor(req), refreshToken, { ...options(req), maxAge: seconds * 1000 });
}

export function clearSessionCookie(req: Request, res: Response): void {
  res.clearCookie(nameFor(req), options(req));
}
