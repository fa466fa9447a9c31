import { z } from 'zod';
import { envelopeOf } from '../shared/envelope';
import { DELIVERY_STATUSES, SUBSCRIBABLE_EVENTS } from './webhooks.schemas';

const unixSeconds = z.int().min(0);

/** An endpoint as the presenter sends it; the source of the OpenAPI response schemas. */
export const webhookRecord = z.strictObject({
  id: z.uuid().meta({ readOnly: true, description: 'The endpoint\'s id.' }),
  url: z.string().meta({ description: 'Where messages are POSTed.' }),
  events: z.array(z.enum(SUBSCRIBABLE_EVENTS)).min(1).meta({ description: 'The audit event types sent to it; "*" for all.' }),
  description: z.string().max(1024).meta({ description: 'Free text.' }),
  enabled: z.boolean().meta({ description: 'False: nothing is sent to it; events that happen meanwhile are never sent to it.' }),
  created_at: unixSeconds.meta({ readOnly: true, description: 'Unix time in seconds of its creation.' }),
});

/** Create and rotate-secret alone return the signing secret. */
export const webhookRecordWithSecret = webhookRecord.extend({
  secret: z
    .string()
    .regex(/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/)
    .meta({ readOnly: true, description: 'The signing secret for a Standard Webhooks verifier (`whsec_` and base64); shown only now.' }),
});

/** One message to an endpoint, in the delivery log. */
export const deliveryRecord = z.strictObject({
  id: z.string().regex(/^msg_[0-9a-f]{32}$/).meta({ description: 'The message id, sent as `webhook-id`: the same at every attempt.' }),
  type: z.string().meta({ description: 'The audit event type.' }),
  event_id: z.int().min(1).meta({ description: 'The id of the audit event the message reports.' }),
  status: z.enum(DELIVERY_STATUSES).meta({ description: 'pending (due or waiting for a retry), delivered (a 2xx answer), failed (retries exhausted, or its address refused).' }),
  attempts: z.int().min(0).meta({ description: 'Attempts made so far.' }),
  last_status_code: z.int().nullable().meta({ description: 'The HTTP status of the last answer; null before one, or when the last attempt got none.' }),
  last_error: z
    .enum(['non_2xx', 'timeout', 'network_error', 'dns_failed', 'address_refused', 'event_pruned'])
    .nullable()
    .meta({ description: 'Why the last attempt failed; null before one and once delivered.' }),
  next_attempt_at: unixSeconds.nullable().meta({ description: 'Unix time in seconds of the next attempt while pending; null once delivered or failed.' }),
  created_at: unixSeconds.meta({ description: 'Unix time in seconds when the message was stored (with its event).' }),
});

export const webhookEnvelope = envelopeOf(webhookRecord);
export const webhookWithSecretEnvelope = envelopeOf(webhookRecordWithSecret);
export const webhookListEnvelope = envelopeOf(z.array(webhookRecord));
export const deliveryEnvelope = envelopeOf(deliveryRecord);
export const deliveryListEnvelope = envelopeOf(z.array(deliveryRecord));

export type WebhookRecord = z.output<typeof webhookRecord>;
export type WebhookRecordWithSecret = z.output<typeof webhookRecordWithSecret>;
export type DeliveryRecord = z.output<typeof deliveryRecord>;
export type DeliveryError = NonNullable<DeliveryRecord['last_error']>;
