import { PATHS } from '../shared/paths';
import { BEARER, BODILESS_BEARER_ERRORS, errors, jsonBody, ok, parametersOf, type OpenApiOperation, type RoutesDescription } from '../http/openapi';
import { createWebhookBody, listDeliveriesQuery, listWebhooksQuery, updateWebhookBody, webhookIdParams } from './webhooks.schemas';
import {
  deliveryEnvelope,
  deliveryListEnvelope,
  deliveryRecord,
  webhookEnvelope,
  webhookListEnvelope,
  webhookRecord,
  webhookRecordWithSecret,
  webhookWithSecretEnvelope,
} from './webhooks.responses';

function webhookOperation(operationId: string, summary: string, rest: Omit<OpenApiOperation, 'operationId' | 'summary' | 'tags' | 'security'>): OpenApiOperation {
  return { operationId, summary, tags: ['Webhooks'], security: BEARER, ...rest };
}

const ID = { $ref: '#/components/parameters/WebhookId' };
const READ_ERRORS = [...BODILESS_BEARER_ERRORS, 'NotFound'] as const;

function idParameter() {
  const [id] = parametersOf(webhookIdParams, 'path', { id: 'The endpoint\'s id.' });
  return id!;
}

/** The operations of webhooksRouter, mounted at PATHS.webhooks; admins only. */
export function describeWebhookRoutes(): RoutesDescription {
  const base = PATHS.webhooks;
  return {
    paths: {
      [base]: {
        get: webhookOperation('v1_webhooks_get', 'List webhook endpoints, ordered by id (admin only)', {
          parameters: parametersOf(listWebhooksQuery, 'query', {
            limit: 'Page size, 1 to 1000; 100 when omitted.',
            after: 'Only endpoints whose id sorts after this one: the last id of the previous page.',
          }),
          responses: { 200: ok('A page of endpoints.', 'WebhookListEnvelope'), ...errors(...BODILESS_BEARER_ERRORS) },
        }),
        post: webhookOperation('v1_webhooks_post', 'Register a webhook endpoint (admin only)', {
          requestBody: jsonBody('CreateWebhookBody', 'The endpoint: its URL (https: and a public address unless WEBHOOK_ALLOW_INSECURE=true) and the event types it receives.'),
          responses: {
            201: ok('The endpoint, with its signing secret (shown only now).', 'WebhookWithSecretEnvelope'),
            ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'),
          },
        }),
      },
      [`${base}/{id}`]: {
        parameters: [ID],
        get: webhookOperation('v1_webhooks_id_get', 'Get a webhook endpoint (admin only)', {
          responses: { 200: ok('The endpoint.', 'WebhookEnvelope'), ...errors(...READ_ERRORS) },
        }),
        put: webhookOperation('v1_webhooks_id_put', 'Replace a webhook endpoint\'s url, events, description and enabled (admin only)', {
          requestBody: jsonBody('UpdateWebhookBody', 'The complete new contents; an omitted description becomes "", an omitted enabled true.'),
          responses: { 200: ok('The endpoint.', 'WebhookEnvelope'), ...errors(...READ_ERRORS, 'Conflict') },
        }),
        delete: webhookOperation('v1_webhooks_id_delete', 'Delete a webhook endpoint and its messages (admin only)', {
          responses: { 204: { description: 'Deleted; no body.' }, ...errors(...READ_ERRORS) },
        }),
      },
      [`${base}/{id}/rotate-secret`]: {
        parameters: [ID],
        post: webhookOperation('v1_webhooks_id_rotate_secret_post', 'Rotate an endpoint\'s signing secret (admin only)', {
          responses: {
            200: ok('The endpoint with its new secret (shown only now); for 24 hours messages carry a signature by the old secret too.', 'WebhookWithSecretEnvelope'),
            ...errors(...READ_ERRORS),
          },
        }),
      },
      [`${base}/{id}/deliveries`]: {
        parameters: [ID],
        get: webhookOperation('v1_webhooks_id_deliveries_get', 'The delivery log of an endpoint, newest first (admin only)', {
          parameters: parametersOf(listDeliveriesQuery, 'query', {
            limit: 'Page size, 1 to 1000; 100 when omitted.',
            after: 'Only messages older than this one: the last id of the previous page.',
            status: 'Only messages in this state: pending, delivered or failed.',
          }),
          responses: { 200: ok('A page of messages.', 'DeliveryListEnvelope'), ...errors(...READ_ERRORS) },
        }),
      },
      [`${base}/{id}/test`]: {
        parameters: [ID],
        post: webhookOperation('v1_webhooks_id_test_post', 'Send an endpoint a test message (admin only; audited as webhook.tested)', {
          responses: {
            202: ok('The test message, queued like any other: follow it in the delivery log.', 'DeliveryEnvelope'),
            ...errors(...READ_ERRORS, 'Conflict'),
          },
        }),
      },
    },
    requestSchemas: { CreateWebhookBody: createWebhookBody, UpdateWebhookBody: updateWebhookBody },
    responseSchemas: {
      Webhook: webhookRecord,
      WebhookWithSecret: webhookRecordWithSecret,
      WebhookEnvelope: webhookEnvelope,
      WebhookWithSecretEnvelope: webhookWithSecretEnvelope,
      WebhookListEnvelope: webhookListEnvelope,
      WebhookDelivery: deliveryRecord,
      DeliveryEnvelope: deliveryEnvelope,
      DeliveryListEnvelope: deliveryListEnvelope,
    },
    parameters: { WebhookId: idParameter() },
  };
}
