import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { dpopPresentationOf, presentedAccessTokenOf, type Authenticator } from '../http/authenticate';
import { jsonOrFormBody } from '../http/body-parsers';
import { methodNotAllowed, toAppError } from '../http/error-handler';
import { noStore } from '../http/no-store';
import type { RateLimits } from '../http/rate-limits';
import { originOf } from '../http/request-origin';
import type { ClientSecrets } from '../tokens/client-secrets';
import { OAuthError, UnauthorizedError } from '../shared/errors';
import { PATHS } from '../shared/paths';
import { scopesOf, type Principal } from '../shared/principals';
import { clientAuthenticationOf } from './client-authentication';
import type { IntrospectionService } from './introspection.service';
import type { RevocationService } from './revocation.service';
import { verifiedClient, type TokenEndpoint } from './token-endpoint';
import { required, tokenParametersOf, type TokenParameters } from './token-request';
import type { TokenTypeHint } from './oauth.schemas';

export interface OAuthEndpointsDeps {
  endpoint: TokenEndpoint;
  clients: ClientSecrets;
  revocation: RevocationService;
  introspection: IntrospectionService;
  authenticator: Authenticator;
  limits: RateLimits;
}

/**
 * The standard OAuth 2.0 endpoints: /oauth2/token, and /oauth2/revoke and /oauth2/introspect, which
 * do what the service's own revoke and introspect routes do and also take an API key's client
 * authentication (RFC 7009 §2.1, RFC 7662 §2.1). No-store and the per-address limit first, as on
 * every token route; a password grant's refusals also count against the failed-login limits.
 */
export function oauthEndpointsRouter({ endpoint, clients, revocation, introspection, authenticator, limits }: OAuthEndpointsDeps): Router {
  const router = Router();

  router
    .route(PATHS.oauthToken)
    .post(noStore, limits.tokenRoutes, jsonOrFormBody, ...onlyFor(isPasswordGrant, limits.passwordFailures), async function token(req: Request, res: Response) {
      res.json(await endpoint.token(req.headers.authorization, req.body, dpopPresentationOf(req), originOf(req)));
    })
    .all(methodNotAllowed(['POST']));

  router
    .route(PATHS.oauthRevocation)
    .post(noStore, limits.tokenRoutes, jsonOrFormBody, async function revokeToken(req: Request, res: Response) {
      const parameters = tokenParametersOf(req.body);
      const origin = originOf(req);
      // Revocation works by possession; credentials, when sent, must be right (else nothing is revoked).
      await verifiedClient(clients, clientAuthenticationOf(req.headers.authorization, parameters), origin);
      await revocation.revoke(required(parameters, 'token'), hintOf(parameters), origin);
      res.status(200).end();
    })
    .all(methodNotAllowed(['POST']));

  router
    .route(PATHS.oauthIntrospection)
    .post(noStore, limits.tokenRoutes, limits.bearerFailures, jsonOrFormBody, async function introspectToken(req: Request, res: Response) {
      const parameters = tokenParametersOf(req.body);
      const caller = await callerOf(req, res, parameters);
      res.json(await introspection.introspect(caller, required(parameters, 'token'), hintOf(parameters)));
    })
    .all(methodNotAllowed(['POST']));

  // Any other 400 of these endpoints (a body the parsers refuse, say) is RFC 6749 §5.2's invalid_request.
  router.use(function badRequestAsInvalidRequest(err: unknown, _req: Request, _res: Response, next: NextFunction) {
    const error = toAppError(err);
    next(error.status === 400 && !(error instanceof OAuthError) ? new OAuthError('invalid_request', error.message, { cause: err }) : err);
  });

  /** A bearer token's principal, or the API key that authenticated as a client, with the scopes of its role. */
  async function callerOf(req: Request, res: Response, parameters: TokenParameters): Promise<Principal> {
    const authorization = req.headers.authorization;
    // A Bearer or DPoP header is judged exactly as on every other bearer route, refusals counted as there.
    if (/^(Bearer|DPoP)\b/i.test(authorization ?? '')) {
      try {
        return await authenticator.authenticate(presentedAccessTokenOf(req, res), req);
      } catch (err) {
        if (err instanceof UnauthorizedError) res.locals.bearerRefused = true;
        throw err;
      }
    }
    const client = await verifiedClient(clients, clientAuthenticationOf(authorization, parameters), originOf(req));
    if (!client) throw new UnauthorizedError('A bearer token or client authentication is required', false);
    return { type: 'api_key', id: client.id, name: client.appname, role: client.role, sessionId: '', scopes: scopesOf(client.role) };
  }

  return router;
}

/** RFC 7009 §2.1 and RFC 7662 §2.1: the hint is advisory; one the service does not know is ignored. */
function hintOf(parameters: TokenParameters): TokenTypeHint | undefined {
  const hint = parameters.token_type_hint;
  return hint === 'access_token' || hint === 'refresh_token' ? hint : undefined;
}

const isPasswordGrant = (req: Request) => (req.body as { grant_type?: unknown } | undefined)?.grant_type === 'password';

/** `handlers` for the requests `applies` to; the others pass by. */
function onlyFor(applies: (req: Request) => boolean, handlers: RequestHandler[]): RequestHandler[] {
  return handlers.map((handler) => (req: Request, res: Response, next: NextFunction) => (applies(req) ? handler(req, res, next) : next()));
}
