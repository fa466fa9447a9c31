import { Router, type Request, type Response } from 'express';
import type { BearerAuthenticator } from '../auth/bearer-authenticator';
import { alongsideOf, authenticate, principalOf } from '../http/authenticate';
import { jsonBody } from '../http/body-parsers';
import { sendJsonParts } from '../http/json-parts';
import type { RateLimits } from '../http/rate-limits';
import { methodNotAllowed } from '../http/error-handler';
import { noStore } from '../http/no-store';
import { parseInput } from '../http/validate';
import { originOf } from '../http/request-origin';
import { envelope, listPageJsonParts, presentApiKey, presentApiKeyWithSecret } from './api-keys.presenter';
import type { ApiKeyRow } from './api-keys.repository';
import { APPNAME_PATTERN, appnameParams, createApiKeyBody, listApiKeysQuery, regenApiKeyQuery, updateApiKeyBody } from './api-keys.schemas';
import type { ApiKeysService } from './api-keys.service';

/**
 * /api/v1/api-keys. Every route: authenticate (401) → the per-principal limit (429) → a method not
 * served (405) → body parsing, for every method, as a body on a GET or DELETE is checked too
 * (415/413/400) → validation (400) → the service, which decides authorisation (403) before existence (404).
 */
export function apiKeysRouter(service: ApiKeysService, authenticator: BearerAuthenticator, limits: RateLimits): Router {
  const router = Router();

  // For GET /{appname}, the hottest route, the bearer check's statement also reads the key: one
  // database round trip (the read benchmark). Authentication still comes first for every request.
  router.use(authenticate(authenticator, (req) => keyReadFor(service, req)), limits.keyOperations);

  // Create and regen answer with an appkey in the clear, shown only then: no cache may keep it.
  router
    .route('/')
    .get(jsonBody, async function listApiKeys(req: Request, res: Response) {
      const page = parseInput(listApiKeysQuery, req.query, 'query');
      const keys = await service.list(principalOf(res), page);
      sendJsonParts(res, listPageJsonParts(keys));
    })
    .post(noStore, jsonBody, async function createApiKey(req: Request, res: Response) {
      const input = parseInput(createApiKeyBody, req.body, 'body');
      const { key, appkey } = await service.create(principalOf(res), input, originOf(req));
      res.status(201).json(envelope(201, presentApiKeyWithSecret(key, appkey)));
    })
    .all(methodNotAllowed(['GET', 'POST']));

  router
    .route('/:appname')
    .get(jsonBody, async function getApiKey(req: Request, res: Response) {
      const { appname } = parseInput(appnameParams, req.params, 'params');
      const key = service.get(principalOf(res), appname, alongsideOf<ApiKeyRow | undefined>(res));
      res.json(envelope(200, presentApiKey(key)));
    })
    .put(jsonBody, async function updateApiKey(req: Request, res: Response) {
      const { appname } = parseInput(appnameParams, req.params, 'params');
      const input = parseInput(updateApiKeyBody, req.body, 'body');
      const key = await service.update(principalOf(res), appname, input, originOf(req));
      res.json(envelope(200, presentApiKey(key)));
    })
    .delete(jsonBody, async function deleteApiKey(req: Request, res: Response) {
      const { appname } = parseInput(appnameParams, req.params, 'params');
      await service.delete(principalOf(res), appname, originOf(req));
      res.status(204).end();
    })
    .all(methodNotAllowed(['GET', 'PUT', 'DELETE']));

  router
    .route('/:appname/regen')
    .put(noStore, jsonBody, async function regenerateApiKey(req: Request, res: Response) {
      const { appname } = parseInput(appnameParams, req.params, 'params');
      const { grace_seconds: graceSeconds } = parseInput(regenApiKeyQuery, req.query, 'query');
      const input = parseInput(updateApiKeyBody, req.body, 'body');
      const { key, appkey } = await service.regen(principalOf(res), appname, input, { graceSeconds }, originOf(req));
      res.json(envelope(200, presentApiKeyWithSecret(key, appkey)));
    })
    .all(methodNotAllowed(['PUT']));

  return router;
}

/**
 * The key read to make with the bearer check: only for GET (and HEAD) /{appname}. Route params are
 * not parsed before authentication, so the name comes from the raw path; a name no key can have
 * (including a malformed escape, a 400 later) reads nothing.
 */
function keyReadFor(service: ApiKeysService, req: Request) {
  if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
  const segment = /^\/([^/]+)\/?$/.exec(req.path)?.[1];
  if (segment === undefined) return undefined;
  return service.readAlongBearer(possibleAppname(segment));
}

function possibleAppname(segment: string): string | null {
  try {
    const appname = decodeURIComponent(segment);
    return APPNAME_PATTERN.test(appname) ? appname : null;
  } catch {
    return null;
  }
}
