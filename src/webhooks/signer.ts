import { createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks' prefix of a signing secret; the rest is the secret's bytes in standard base64. */
const SECRET_PREFIX = 'whsec_';
/** 32 random bytes: the specification asks for 24 to 64. */
const SECRET_BYTES = 32;

/** What sealing binds a webhook secret to: its endpoint, so a sealed secret cannot be moved to another row. */
export const secretBinding = (endpointId: string) => `webhook:${endpointId}`;

/** A new signing secret's bytes. */
export function generateSecret(): Buffer {
  return randomBytes(SECRET_BYTES);
}

/** The secret as the endpoint's owner configures it in a `standardwebhooks` verifier. */
export function formatSecret(secret: Buffer): string {
  return `${SECRET_PREFIX}${secret.toString('base64')}`;
}

/** The message id as sent in `webhook-id`: `msg_` and the delivery's UUID without dashes. */
export function messageIdOf(deliveryId: string): string {
  return `msg_${deliveryId.replaceAll('-', '')}`;
}

/** The delivery's UUID from a `webhook-id`, or undefined when it is not one this service made. */
export function deliveryIdOf(messageId: string): string | undefined {
  const match = /^msg_([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$/.exec(messageId);
  return match ? match.slice(1).join('-') : undefined;
}

/**
 * The headers of one attempt, as the Standard Webhooks specification defines them: `webhook-id`,
 * `webhook-timestamp` (Unix seconds of this attempt, so a receiver's tolerance window holds for a
 * retry hours later) and `webhook-signature`, one `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
 * per secret, separated by spaces (two for 24 hours after a rotation).
 */
export function signedHeaders(messageId: string, body: string, secrets: readonly Buffer[], nowSeconds: number): Record<string, string> {
  const timestamp = String(nowSeconds);
  const signed = `${messageId}.${timestamp}.${body}`;
  const signatures = secrets.map((secret) => `v1,${createHmac('sha256', secret).update(signed).digest('base64')}`);
  return { 'webhook-id': messageId, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
}
