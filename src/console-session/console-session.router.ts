import { Router, type NextFunction, type Request, type Response } from 'express';
import { jsonBody } from '../http/body-parsers';
import { methodNotAllowed } from '../http/error-handler';
import { noStore } from '../http/no-store';
import type { RateLimits } from '../http/rate-limits';
import { originOf } from '../http/request-origin';
import { parseInput } from '../http/validate';
import { envelope } from '../shared/envelope';
import { AppError, forbidden, UnauthorizedError } from '../shared/errors';
import { CONSOLE_SESSION_HEADER } from '../shared/console-session';
import { CONSOLE_CLIENT_ID } from '../config/server.env';
import type { RefreshGrant } from '../tokens/grants/refresh.grant';
import type { OAuthTokenResponse } from '../tokens/tokens.responses';
import type { RevocationService } from '../oauth/revocation.service';
import { handOverBody } from './console-session.schemas';
import type { ConsoleAccess } from './console-session.responses';
import { clearSessionCookie, cookieUnusable, sessionCookieOf, setSessionCookie } from './session-cookie';

export const SESSION_ENDED = 'The console session ended: sign in again';

/**
 * Only the console's own page: the custom header (another origin cannot send it without a CORS
 * preflight, which is never granted), and, where the browser says, a same-origin request. The
 * cookie's SameSite=Strict already keeps it from other sites' requests; this keeps it from other
 * origins of the same site too.
 */
function fromTheConsole(req: Request, _res: Response, next: NextFunction): void {
  if (req.get(CONSOLE_SESSION_HEADER) !== '1') throw forbidden(`The console session takes only the console's own requests (${CONSOLE_SESSION_HEADER}: 1)`);
  const site = req.get('Sec-Fetch-Site');
  if (site !== undefined && site !== 'same-origin') throw forbidden('The console session takes only same-origin requests');
  const origin = req.get('Origin');
  if (origin !== undefined && hostOf(origin) !== req.host) throw forbidden('The console session takes only same-origin requests');
  next();
}

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}

/** The access token for the page; the refresh token goes into the cookie, never to the page. */
function keep(req: Request, res: Response, tokens: OAuthTokenResponse): ConsoleAccess {
  if (tokens.refresh_token === undefined) throw new Error('a refresh grant answered no refresh token');
  setSessionCookie(req, res, tokens.refresh_token, tokens.refresh_expires_in ?? 0);
  return { access_token: tokens.access_token, token_type: 'bearer', expires_in: tokens.expires_in, scope: tokens.scope };
}

/**
 * /console/session, the console's session route: the refresh token in a cookie (see session-cookie.ts),
 * so a reload keeps the operator signed in while no script can read the token. PUT hands over the
 * refresh token of a sign-in, POST renews (a refresh of that token: one use, reuse ends the session,
 * as on every refresh), DELETE signs out (revokes and clears). The access token stays in the page.
 */
export function consoleSessionRouter(grant: RefreshGrant, revocation: RevocationService, limits: RateLimits): Router {
  const router = Router();

  /** A refresh of `refreshToken` for the console client; any refusal ends the cookie's session for the page. */
  async function rotate(req: Request, res: Response, refreshToken: string): Promise<ConsoleAccess> {
    try {
      return keep(req, res, await grant.refresh(refreshToken, originOf(req), { clientId: CONSOLE_CLIENT_ID }));
    } catch (err) {
      if (!(err instanceof AppError) || (err.status !== 400 && err.status !== 401)) throw err;
      clearSessionCookie(req, res);
      throw new UnauthorizedError(SESSION_ENDED, false);
    }
  }

  router
    .route('/')
    .all(noStore, ...limits.tokenRoutes, fromTheConsole)
    .put(jsonBody, async function handOver(req: Request, res: Response) {
      const { refresh_token: refreshToken } = parseInput(handOverBody, req.body, 'body');
      if (cookieUnusable(req)) throw forbidden('The console keeps its session in a cookie only over HTTPS, or plain HTTP on a loopback address');
      res.json(envelope(200, await rotate(req, res, refreshToken)));
    })
    .post(jsonBody, async function renew(req: Request, res: Response) {
      const refreshToken = sessionCookieOf(req);
      // No cookie: a first visit, or a sign-out; nothing to resume, and nothing refused.
      if (refreshToken === undefined) return void res.status(204).end();
      res.json(envelope(200, await rotate(req, res, refreshToken)));
    })
    .delete(jsonBody, async function signOut(req: Request, res: Response) {
      const refreshToken = sessionCookieOf(req);
      if (refreshToken !== undefined) await revocation.revoke(refreshToken, 'refresh_token', originOf(req));
      clearSessionCookie(req, res);
      res.status(204).end();
    })
    .all(methodNotAllowed(['PUT', 'POST', 'DELETE']));

  return router;
}
