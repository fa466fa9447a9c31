import { Router, type Request, type Response } from 'express';
import { authenticate, principalOf, type Authenticator } from '../http/authenticate';
import { jsonBody } from '../http/body-parsers';
import type { RateLimits } from '../http/rate-limits';
import { methodNotAllowed } from '../http/error-handler';
import { noStore } from '../http/no-store';
import { parseInput } from '../http/validate';
import { originOf } from '../http/request-origin';
import { envelope } from '../shared/envelope';
import { presentDelivery, presentWebhook, presentWebhookWithSecret } from './webhooks.presenter';
import { emptyBody, endpointBodies, listDeliveriesQuery, listWebhooksQuery, webhookIdParams } from './webhooks.schemas';
import type { WebhooksService } from './webhooks.service';

/**
 * /api/v1/webhooks, as the key routes: refused-token limit (429) → authenticate (401) → the
 * per-principal limit (429) → a method not served (405) → body parsing (415/413/400) → validation
 * (400, the URL's form included) → the service, which decides authorisation (403, admins only)
 * before existence (404), and then resolves a new URL's host (400 when it does not resolve or
 * resolves to a non-public address).
 */
export function webhooksRouter(service: WebhooksService, authenticator: Authenticator, limits: RateLimits, urlRules: { allowInsecure: boolean }): Router {
  const bodies = endpointBodies(urlRules.allowInsecure);
  const router = Router();
  router.use(...limits.bearerFailures, authenticate(authenticator), ...limits.keyOperations);

  // Create and rotate answer with the signing secret, shown only then: no cache may keep it.
  router
    .route('/')
    .get(jsonBody, async function listWebhooks(req: Request, res: Response) {
      const page = parseInput(listWebhooksQuery, req.query, 'query');
      const rows = await service.list(principalOf(res), page);
      res.json(envelope(200, rows.map(presentWebhook)));
    })
    .post(noStore, jsonBody, async function createWebhook(req: Request, res: Response) {
      const input = parseInput(bodies.create, req.body, 'body');
      const { webhook, secret } = await service.create(principalOf(res), input, originOf(req));
      res.status(201).json(envelope(201, presentWebhookWithSecret(webhook, secret)));
    })
    .all(methodNotAllowed(['GET', 'POST']));

  router
    .route('/:id')
    .get(jsonBody, async function getWebhook(req: Request, res: Response) {
      const { id } = parseInput(webhookIdParams, req.params, 'params');
      res.json(envelope(200, presentWebhook(await service.get(principalOf(res), id))));
    })
    .put(jsonBody, async function updateWebhook(req: Request, res: Response) {
      const { id } = parseInput(webhookIdParams, req.params, 'params');
      const input = parseInput(bodies.update, req.body, 'body');
      res.json(envelope(200, presentWebhook(await service.update(principalOf(res), id, input, originOf(req)))));
    })
    .delete(jsonBody, async function deleteWebhook(req: Request, res: Response) {
      const { id } = parseInput(webhookIdParams, req.params, 'params');
      await service.delete(principalOf(res), id, originOf(req));
      res.status(204).end();
    })
    .all(methodNotAllowed(['GET', 'PUT', 'DELETE']));

  router
    .route('/:id/rotate-secret')
    .post(noStore, jsonBody, async function rotateWebhookSecret(req: Request, res: Response) {
      const { id } = parseInput(webhookIdParams, req.params, 'params');
      parseInput(emptyBody, req.body ?? {}, 'body');
      const { webhook, secret } = await service.rotateSecret(principalOf(res), id, originOf(req));
      res.json(envelope(200, presentWebhookWithSecret(webhook, secret)));
    })
    .all(methodNotAllowed(['POST']));

  router
    .route('/:id/deliveries')
    .get(jsonBody, async function listWebhookDeliveries(req: Request, res: Response) {
      const { id } = parseInput(webhookIdParams, req.params, 'params');
      const page = parseInput(listDeliveriesQuery, req.query, 'query');
      const rows = await service.deliveries(principalOf(res), id, page);
      res.json(envelope(200, rows.map(presentDelivery)));
    })
    .all(methodNotAllowed(['GET']));

  router
    .route('/:id/test')
    .post(jsonBody, async function sendWebhookTest(req: Request, res: Response) {
      const { id } = parseInput(webhookIdParams, req.params, 'params');
      parseInput(emptyBody, req.body ?? {}, 'body');
      const delivery = await service.sendTest(principalOf(res), id, originOf(req));
      res.status(202).json(envelope(202, presentDelivery(delivery)));
    })
    .all(methodNotAllowed(['POST']));

  return router;
}
