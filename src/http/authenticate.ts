import type { NextFunction, Request, Response } from 'express';
import { UnauthorizedError } from '../errors';
import type { BearerAuthenticator } from '../auth/bearer-authenticator';
import type { Principal } from '../auth/roles';

// RFC 6750 b64token.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/** Requires `Authorization: Bearer <access token>` and records the caller for the handlers. */
export function authenticate(authenticator: BearerAuthenticator) {
  return async function authenticateBearer(req: Request, res: Response, next: NextFunction): Promise<void> {
    const header = req.headers.authorization;
    if (!header) throw new UnauthorizedError('Missing bearer token', false);
    const match = BEARER.exec(header);
    if (!match) {
      // RFC 6750 §3.1: another scheme (Basic...) gets the bare challenge; a garbled Bearer is a refused token.
      const bearerScheme = /^Bearer(\s|$)/i.test(header);
      throw new UnauthorizedError('Authorization header must be "Bearer <access token>"', bearerScheme);
    }
    res.locals.principal = await authenticator.authenticate(match[1]!);
    next();
  };
}

/** The caller established by authenticate(); only valid on authenticated routes. */
export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new Error('principalOf() used on a route without authenticate()');
  return principal;
}
