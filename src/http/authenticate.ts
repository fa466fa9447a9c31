import type { NextFunction, Request, Response } from 'express';
import { UnauthorizedError } from '../shared/errors';
import type { Principal } from '../shared/principals';

// RFC 6750 b64token.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/** The access token of `Authorization: Bearer <access token>`, or the 401 for a missing or garbled header. */
export function bearerTokenOf(req: Request): string {
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

/** Establishes who is calling from an access token; anything but a live one is a 401 (UnauthorizedError). */
export interface Authenticator {
  authenticate(accessToken: string, req: Request): Promise<Principal>;
}

/** Requires a live bearer token and records the caller for the handlers (principalOf). */
export function authenticate(authenticator: Authenticator) {
  return async function authenticateBearer(req: Request, res: Response, next: NextFunction): Promise<void> {
    try {
      res.locals.principal = await authenticator.authenticate(bearerTokenOf(req), req);
    } catch (err) {
      // Counted by the per-address limit of refused tokens (bearerFailures); an outage (503) is no refusal.
      if (err instanceof UnauthorizedError) res.locals.bearerRefused = true;
      throw err;
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
