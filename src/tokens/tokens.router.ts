import { Router, type Request, type Response } from 'express';
import { jsonOrFormBody } from '../http/body-parsers';
import { AUTH_PATHS } from '../shared/paths';
import { methodNotAllowed } from '../http/error-handler';
import { noStore } from '../http/no-store';
import type { RateLimits } from '../http/rate-limits';
import { parseInput } from '../http/validate';
import { originOf } from '../http/request-origin';
import { apiKeyTokenBody, passwordTokenBody, refreshTokenBody } from './tokens.schemas';
import type { SigningKeysService } from '../signing-keys/signing-keys.service';
import type { TokenService } from './token.service';

/**
 * The three token routes and the JWK Set. Token routes: no-store, the per-address limit (before
 * any body is read), body parsing, then for passwords the failed-attempt limits.
 */
export function authRouter(tokens: TokenService, signingKeys: SigningKeysService, limits: RateLimits): Router {
  const router = Router();

  router
    .route(AUTH_PATHS.apiKeyToken)
    .post(noStore, limits.tokenRoutes, jsonOrFormBody, async function exchangeRequestToken(req: Request, res: Response) {
      const { jwt } = parseInput(apiKeyTokenBody, req.body, 'body');
      res.json(await tokens.exchangeRequestToken(jwt, originOf(req)));
    })
    .all(methodNotAllowed(['POST']));

  router
    .route(AUTH_PATHS.token)
    .post(noStore, limits.tokenRoutes, jsonOrFormBody, limits.passwordFailures, async function passwordGrant(req: Request, res: Response) {
      const { username, password } = parseInput(passwordTokenBody, req.body, 'body');
      res.json(await tokens.passwordGrant(username, password, originOf(req)));
    })
    .all(methodNotAllowed(['POST']));

  router
    .route(AUTH_PATHS.refresh)
    .post(noStore, limits.tokenRoutes, jsonOrFormBody, async function refreshGrant(req: Request, res: Response) {
      const { refresh_token: refreshToken } = parseInput(refreshTokenBody, req.body, 'body');
      res.json(await tokens.refreshGrant(refreshToken, originOf(req)));
    })
    .all(methodNotAllowed(['POST']));

  router
    .route(AUTH_PATHS.jwks)
    .get(async function jwkSet(_req, res) {
      res.setHeader('Cache-Control', 'public, max-age=60');
      res.json(await signingKeys.jwkSet());
    })
    .all(methodNotAllowed(['GET']));

  return router;
}
