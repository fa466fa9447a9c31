import { Router, type Request, type Response } from 'express';
import { jsonOrFormBody } from '../http/body-parsers';
import { PATHS } from '../shared/paths';
import { methodNotAllowed } from '../http/error-handler';
import { noStore } from '../http/no-store';
import type { RateLimits } from '../http/rate-limits';
import { parseInput } from '../http/validate';
import { originOf } from '../http/request-origin';
import { dpopPresentationOf } from '../http/authenticate';
import type { Dpop } from '../dpop/dpop';
import { apiKeyTokenBody, passwordTokenBody, refreshTokenBody } from './tokens.schemas';
import type { ApiKeyGrant } from './grants/api-key.grant';
import type { PasswordGrant } from './grants/password.grant';
import type { RefreshGrant } from './grants/refresh.grant';

/** The service's own grants, one module each. */
export interface TokenGrants {
  apiKey: ApiKeyGrant;
  password: PasswordGrant;
  refresh: RefreshGrant;
}

/**
 * The three token routes: no-store, the per-address limit (before any body is read), body parsing,
 * then for passwords the failed-attempt limits. The logins issue bearer tokens; the refresh route
 * treats a DPoP proof as /oauth2/token does (one family, whichever route redeems it): it binds the
 * session to the proof's key, and a bound session's refresh needs a proof by that key.
 */
export function tokensRouter(grants: TokenGrants, limits: RateLimits, dpop: Dpop): Router {
  const router = Router();

  router
    .route(PATHS.apiKeyToken)
    .post(noStore, limits.tokenRoutes, jsonOrFormBody, async function exchangeRequestToken(req: Request, res: Response) {
      const { jwt } = parseInput(apiKeyTokenBody, req.body, 'body');
      res.json(await grants.apiKey.exchange(jwt, originOf(req)));
    })
    .all(methodNotAllowed(['POST']));

  router
    .route(PATHS.token)
    .post(noStore, limits.tokenRoutes, jsonOrFormBody, limits.passwordFailures, async function passwordGrant(req: Request, res: Response) {
      const { username, password } = parseInput(passwordTokenBody, req.body, 'body');
      res.json(await grants.password.login(username, password, originOf(req)));
    })
    .all(methodNotAllowed(['POST']));

  router
    .route(PATHS.refresh)
    .post(noStore, limits.tokenRoutes, jsonOrFormBody, async function refreshGrant(req: Request, res: Response) {
      const { refresh_token: refreshToken } = parseInput(refreshTokenBody, req.body, 'body');
      const dpopJkt = await dpop.keyOf(dpopPresentationOf(req));
      res.json(await grants.refresh.refresh(refreshToken, originOf(req), undefined, dpopJkt));
    })
    .all(methodNotAllowed(['POST']));

  return router;
}
