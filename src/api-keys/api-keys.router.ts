import { Router, type Request, type Response } from 'express';
import { authenticate, principalOf, type Authenticator } from '../http/authenticate';
import { jsonBody, largeJsonBody } from '../http/body-parsers';
import type { RateLimits } from '../http/rate-limits';
import { methodNotAllowed } from '../http/error-handler';
import { noStore } from '../http/no-store';
import { parseInput } from '../http/validate';
import { originOf } from '../http/request-origin';
import { envelope } from '../shared/envelope';
import { presentApiKey, presentApiKeyWithSecret } from './api-keys.presenter';
import { sendListPage } from './list-page';
import { appnameParams, createApiKeyBody, listApiKeysQuery, regenApiKeyQuery, updateApiKeyBody } from './api-keys.schemas';
import type { ApiKeysService } from './api-keys.service';
import type { KeyPolicyService } from './key-policy.service';
import type { KeyImportService } from './key-import.service';
import { importApiKeysBody } from './key-import.schemas';
import { putPolicyBody } from '../key-policies/policy.schemas';
import { usageQuery } from '../usage/usage.schemas';
import type { KeyUsageService } from '../usage/usage.service';

/**
 * /api/v1/api-keys. Every route: the per-address limit of refused tokens (429) → authenticate (401) → the per-principal limit (429) → a method not
 * served (405) → body parsing, for every method, as a body on a GET or DELETE is checked too
 * (415/413/400) → validation (400) → the service, which decides authorisation (403) before existence (404).
 */
export function apiKeysRouter(
  service: ApiKeysService,
  policies: KeyPolicyService,
  imports: KeyImportService,
  usage: KeyUsageService,
  authenticator: Authenticator,
  limits: RateLimits,
): Router {
  const router = Router();

  // Spread: router.use() would take a leading empty array (limits off) for a path.
  router.use(...limits.bearerFailures, authenticate(authenticator), ...limits.keyOperations);

  // Create and regen answer with an appkey in the clear, shown only then: no cache may keep it.
  router
    .route('/')
    .get(jsonBody, async function listApiKeys(req: Request, res: Response) {
      const page = parseInput(listApiKeysQuery, req.query, 'query');
      const keys = await service.list(principalOf(res), page);
      sendListPage(res, keys);
    })
    .post(noStore, jsonBody, async function createApiKey(req: Request, res: Response) {
      const input = parseInput(createApiKeyBody, req.body, 'body');
      const { key, appkey } = await service.create(principalOf(res), input, originOf(req));
      res.status(201).json(envelope(201, presentApiKeyWithSecret(key, appkey)));
    })
    .all(methodNotAllowed(['GET', 'POST']));

  // Before /:appname, and POST only: "import" is also a possible appname, whose GET, PUT and DELETE
  // fall through to the routes below. The one route that takes bodies up to 1 MiB.
  router.post('/import', noStore, largeJsonBody, async function importApiKeys(req: Request, res: Response) {
    const input = parseInput(importApiKeysBody, req.body, 'body');
    const keys = await imports.import(principalOf(res), input, originOf(req));
    res.status(201).json(envelope(201, keys.map(presentApiKey)));
  });

  router
    .route('/:appname')
    .get(jsonBody, async function getApiKey(req: Request, res: Response) {
      const { appname } = parseInput(appnameParams, req.params, 'params');
      const key = await service.get(principalOf(res), appname);
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

  // The key's policy, a sub-resource: read by whoever may get the key, replaced by whoever may update it.
  router
    .route('/:appname/policy')
    .get(jsonBody, async function getKeyPolicy(req: Request, res: Response) {
      const { appname } = parseInput(appnameParams, req.params, 'params');
      res.json(envelope(200, await policies.get(principalOf(res), appname)));
    })
    .put(jsonBody, async function putKeyPolicy(req: Request, res: Response) {
      const { appname } = parseInput(appnameParams, req.params, 'params');
      const input = parseInput(putPolicyBody, req.body, 'body');
      res.json(envelope(200, await policies.put(principalOf(res), appname, input, originOf(req))));
    })
    .all(methodNotAllowed(['GET', 'PUT']));

  // The key's usage per hour or day, read by whoever may get the key.
  router
    .route('/:appname/usage')
    .get(jsonBody, async function getKeyUsage(req: Request, res: Response) {
      const { appname } = parseInput(appnameParams, req.params, 'params');
      const query = parseInput(usageQuery, req.query, 'query');
      res.json(envelope(200, await usage.get(principalOf(res), appname, query)));
    })
    .all(methodNotAllowed(['GET']));

  return router;
}
