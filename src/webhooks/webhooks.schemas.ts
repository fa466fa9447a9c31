import { z } from 'zod';
import { AUDIT_EVENT_TYPES } from '../shared/audit-context';
import { AddressRefusedError, checkUrlShape } from './address-rules';

/** What an endpoint may subscribe to: every audit event type, or `*` for all of them, now and to come. */
export const SUBSCRIBABLE_EVENTS = ['*', ...AUDIT_EVENT_TYPES] as const;
export type SubscribableEvent = (typeof SUBSCRIBABLE_EVENTS)[number];

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const LIMIT_RULE = 'must be a whole number from 1 to 1000';
const limit = z
  .string()
  .regex(/^\d{1,4}$/, LIMIT_RULE)
  .transform(Number)
  .pipe(z.number().min(1, LIMIT_RULE).max(1000, LIMIT_RULE));

const endpointId = z.uuid({ error: 'must be a webhook id (a UUID)' }).transform((id) => id.toLowerCase());

const url = z.string().min(1, 'is required').max(2048, 'must be at most 2048 characters');

/** One or more types; repeats are kept once, in the order first given. */
const events = z
  .array(z.enum(SUBSCRIBABLE_EVENTS, { error: `must be "*" or an audit event type: ${AUDIT_EVENT_TYPES.join(', ')}` }))
  .min(1, 'must name at least one event type, or "*"')
  .max(SUBSCRIBABLE_EVENTS.length * 2, `must name at most ${SUBSCRIBABLE_EVENTS.length * 2} event types`)
  .transform((types) => [...new Set(types)]);

const description = z.string().max(1024, 'must be at most 1024 characters');

export const webhookIdParams = z.strictObject({
  /** The endpoint's id, from the path. */
  id: endpointId,
});

export const createWebhookBody = z.strictObject({
  /** Where messages are POSTed: https: and a public address (unless WEBHOOK_ALLOW_INSECURE=true). */
  url,
  /** The audit event types to send, or ["*"] for all. */
  events,
  /** Free text; "" when omitted. */
  description: description.default(''),
});

/** PUT replaces: an omitted description becomes "", an omitted enabled true. */
export const updateWebhookBody = z.strictObject({
  url,
  events,
  description: description.default(''),
  /** A disabled endpoint is sent nothing: neither the events that happen while it is disabled, then or later, nor (until enabled again) its pending messages. */
  enabled: z.boolean().default(true),
});

/**
 * The create and replace bodies as this deployment validates them: `url` must also have the form
 * the address rules ask (checkUrlShape: absolute, https: or with WEBHOOK_ALLOW_INSECURE http: too,
 * no user name or password, no non-public address written in it), so a URL of the wrong form is a
 * 400 before authorisation and existence, like any bad field. Resolving its host is left to the
 * service, which does it for admins only.
 */
export function endpointBodies(allowInsecure: boolean) {
  const formed = url.pipe(
    z.string().superRefine((text, ctx) => {
      try {
        checkUrlShape(text, allowInsecure);
      } catch (err) {
        if (!(err instanceof AddressRefusedError)) throw err;
        ctx.addIssue({ code: 'custom', message: err.message, input: text });
      }
    }),
  );
  return { create: createWebhookBody.extend({ url: formed }), update: updateWebhookBody.extend({ url: formed }) };
}

/** rotate-secret and test take no fields: a body, if any, is an empty object. */
export const emptyBody = z.strictObject({});

export const listWebhooksQuery = z.strictObject({
  /** Page size, 1 to 1000. */
  limit: limit.default(100),
  /** Only endpoints whose id sorts after this one: the last id of the previous page. */
  after: endpointId.optional(),
});

export const listDeliveriesQuery = z.strictObject({
  /** Page size, 1 to 1000. */
  limit: limit.default(100),
  /** Only messages older than this one: the last id of the previous page. */
  after: z
    .string()
    .regex(/^msg_[0-9a-f]{32}$/, 'must be a message id (msg_ and 32 hexadecimal digits)')
    .optional(),
  /** Only messages in this state. */
  status: z.enum(DELIVERY_STATUSES, { error: `must be one of ${DELIVERY_STATUSES.join(', ')}` }).optional(),
});

export type CreateWebhookInput = z.output<typeof createWebhookBody>;
export type UpdateWebhookInput = z.output<typeof updateWebhookBody>;
export type ListWebhooksInput = z.output<typeof listWebhooksQuery>;
export type ListDeliveriesInput = z.output<typeof listDeliveriesQuery>;
