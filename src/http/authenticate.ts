import type { NextFunction, Request, Response } from 'express';
import type { DpopPresentation } from '../shared/dpop';
import { UnauthorizedError } from '../shared/errors';
import type { Principal } from '../shared/principals';

// RFC 6750 b64token, after the scheme: `Bearer` (RFC 6750) or `DPoP` (RFC 9449 §7.1), any case.
const CREDENTIALS = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*)$/i;

/** An access token as a request presents it: by which scheme, and the request's DPoP proof, if any. */
export interface PresentedAccessToken {
  token: string;
  scheme: 'Bearer' | 'DPoP';
  dpop: DpopPresentation;
}

/**
 * What a request shows a DPoP check: every DPoP header field it sent, its method and path. Node joins
 * repeated fields with ", ", and a proof (base64url and dots) holds no comma, so splitting there
 * recovers each (cheaper than headersDistinct, which copies every header of every request).
 */
export function dpopPresentationOf(req: Request): DpopPresentation {
  const value = req.headers.dpop;
  const proofs = value === undefined ? [] : [value].flat().flatMap((field) => field.split(',').map((proof) => proof.trim()));
  return { proofs, method: req.method, path: req.originalUrl.split('?')[0]! };
}

/**
 * The access token of `Authorization: Bearer <token>` or `Authorization: DPoP <token>`, or the 401
 * for a missing or garbled header. The scheme chosen is kept for the challenge of a refusal.
 */
export function presentedAccessTokenOf(req: Request, res: Response): PresentedAccessToken {
  const header = req.headers.authorization;
  if (!header) throw new UnauthorizedError('Missing bearer token', false);
  const match = CREDENTIALS.exec(header);
  if (/^DPoP\b/i.test(header)) res.locals.authScheme = 'DPoP';
  if (!match) {
    // "Bearer" alone sends no token (Node trims the value): the bare challenge of a missing one.
    if (/^(Bearer|DPoP)$/i.test(header)) throw new UnauthorizedError('Missing bearer token', false);
    // RFC 6750 §3.1: another scheme (Basic...) gets the bare challenge; a garbled Bearer or DPoP is a refused token.
    const ourScheme = /^(Bearer|DPoP)\s/i.test(header);
    throw new UnauthorizedError('Authorization header must be "Bearer <access token>" or "DPoP <access token>"', ourScheme);
  }
  const scheme = match[1]!.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer';
  return { token: match[2]!, scheme, dpop: dpopPresentationOf(req) };
}

/** Establishes who is calling from an access token; anything but a live one is a 401 (UnauthorizedError). */
export interface Authenticator {
  authenticate(presented: PresentedAccessToken, req: Request): Promise<Principal>;
}

/** Requires a live access token (bearer, or DPoP-bound with its proof) and records the caller for the handlers (principalOf). */
export function authenticate(authenticator: Authenticator) {
  return async function authenticateBearer(req: Request, res: Response, next: NextFunction): Promise<void> {
    try {
      res.locals.principal = await authenticator.authenticate(presentedAccessTokenOf(req, res), req);
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
