import type { NextFunction, Request, Response } from 'express';
import { UnauthorizedError } from '../errors';
import type { BearerAuthenticator, SessionRead } from '../auth/bearer-authenticator';
import type { Principal } from '../auth/roles';

// RFC 6750 b64token.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/** The access token of `Authorization: Bearer <access token>`, or the 401 for a missing or garbled header. */
function bearerTokenOf(req: Request): string {
  const header = req.headers.authorization;
  if (!header) throw new UnauthorizedError('Missing bearer token', false);
  const match = BEARER.exec(header);
  if (!match) {
    // "Bearer" alone sends no token (Node trims the value): the bare challenge of a missing one.
    if (/^Bearer$/i.test(header)) throw new UnauthorizedError('Missing bearer token', false);
    // RFC 6750 §3.1: another scheme (Basic...) gets the bare challenge; a garbled Bearer is a refused token.
    const bearerScheme = /^Bearer\s/i.test(header);
    throw new UnauthorizedError('Authorization header must be "Bearer <access token>"', bearerScheme);
  }
  return match[1]!;
}

/**
 * Requires a live bearer token and records the caller for the handlers. `readAlong` may name, for a
 * given request, a read of the route's own that shares the liveness check's statement (one round
 * trip on a hot route); its result is the handler's through alongsideOf().
 */
export function authenticate(authenticator: BearerAuthenticator, readAlong?: (req: Request) => SessionRead<unknown> | undefined) {
  return async function authenticateBearer(req: Request, res: Response, next: NextFunction): Promise<void> {
    const token = bearerTokenOf(req);
    const read = readAlong?.(req);
    if (read) {
      const { principal, alongside } = await authenticator.authenticateReading(token, read);
      res.locals.principal = principal;
      res.locals.alongside = { value: alongside };
    } else {
      res.locals.principal = await authenticator.authenticate(token);
    }
    next();
  };
}

/** The caller established by authenticate(); only valid on authenticated routes. */
export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new Error('principalOf() used on a route without authenticate()');
  return principal;
}

/** What authenticate()'s `readAlong` read beside the liveness check; only valid on requests it named a read for. */
export function alongsideOf<T>(res: Response): T {
  const alongside = res.locals.alongside as { value: T } | undefined;
  if (!alongside) throw new Error('alongsideOf() used on a request without a read along the bearer check');
  return alongside.value;
}
