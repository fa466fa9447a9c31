import type { WebhookRow } from './webhooks.repository';
import type { DeliveryRow } from './deliveries.repository';
import type { DeliveryRecord, WebhookRecord, WebhookRecordWithSecret } from './webhooks.responses';
import { messageIdOf } from './signer';

const seconds = (at: Date) => Math.floor(at.getTime() / 1000);

/** The endpoint record, field by field: never its sealed secrets or its lease. */
export function presentWebhook(row: WebhookRow): WebhookRecord {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    created_at: seconds(row.created_at),
  };
}

export function presentWebhookWithSecret(row: WebhookRow, secret: string): WebhookRecordWithSecret {
  return { ...presentWebhook(row), secret };
}

export function presentDelivery(row: DeliveryRow): DeliveryRecord {
  return {
    id: messageIdOf(row.id),
    type: row.type,
    // Identity values stay far below 2^53, so the number is exact.
    event_id: Number(row.audit_event_id),
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    next_attempt_at: row.next_attempt_at && seconds(row.next_attempt_at),
    created_at: seconds(row.created_at),
  };
}
