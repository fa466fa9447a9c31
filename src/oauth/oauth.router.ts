import { Router, type Request, type Response } from 'express';
import { authenticate, principalOf, type Authenticator } from '../http/authenticate';
import { jsonOrFormBody } from '../http/body-parsers';
import { methodNotAllowed } from '../http/error-handler';
import { noStore } from '../http/no-store';
import type { RateLimits } from '../http/rate-limits';
import { parseInput } from '../http/validate';
import { originOf } from '../http/request-origin';
import { PATHS } from '../shared/paths';
import type { DiscoveryDocument } from './oauth.responses';
import type { IntrospectionService } from './introspection.service';
import { introspectionBody, revocationBody } from './oauth.schemas';
import type { RevocationService } from './revocation.service';

export interface OAuthRouterDeps {
  revocation: RevocationService;
  introspection: IntrospectionService;
  authenticator: Authenticator;
  discovery: DiscoveryDocument;
  limits: RateLimits;
}

/**
 * Revocation (RFC 7009), introspection (RFC 7662) and discovery. Both token routes: no-store and the
 * per-address token-route limit first; introspection then authenticates the caller before the body.
 */
export function oauthRouter({ revocation, introspection, authenticator, discovery, limits }: OAuthRouterDeps): Router {
  const router = Router();

  router
    .route(PATHS.revocation)
    .post(noStore, limits.tokenRoutes, jsonOrFormBody, async function revokeToken(req: Request, res: Response) {
      const { token, token_type_hint: hint } = parseInput(revocationBody, req.body, 'body');
      await revocation.revoke(token, hint, originOf(req));
      // RFC 7009 §2.2: 200 whether or not the token was valid; the body is empty.
      res.status(200).end();
    })
    .all(methodNotAllowed(['POST']));

  router
    .route(PATHS.introspection)
    .post(noStore, limits.tokenRoutes, limits.bearerFailures, authenticate(authenticator), jsonOrFormBody, async function introspectToken(req: Request, res: Response) {
      const { token, token_type_hint: hint } = parseInput(introspectionBody, req.body, 'body');
      res.json(await introspection.introspect(principalOf(res), token, hint));
    })
    .all(methodNotAllowed(['POST']));

  router
    .route([PATHS.authorizationServerMetadata, PATHS.discovery])
    .get(function authorizationServerMetadata(_req, res) {
      res.setHeader('Cache-Control', 'public, max-age=300');
      res.json(discovery);
    })
    .all(methodNotAllowed(['GET']));

  return router;
}
