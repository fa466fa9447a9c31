import type { Queryable } from '../db/database';
import type { SealedColumn } from '../db/sealed-secrets';
import type { SubscribableEvent } from './webhooks.schemas';

export interface WebhookRow {
  id: string;
  url: string;
  events: SubscribableEvent[];
  description: string;
  enabled: boolean;
  created_at: Date;
}

const COLUMNS = 'id, url, events, description, enabled, created_at';

export interface NewWebhook {
  id: string;
  url: string;
  events: string[];
  description: string;
  secretCiphertext: Buffer;
}

export async function insertWebhook(q: Queryable, w: NewWebhook): Promise<WebhookRow> {
  const { rows } = await q.query<WebhookRow>(
    `INSERT INTO webhook_endpoints (id, url, events, description, secret_ciphertext) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
    [w.id, w.url, w.events, w.description, w.secretCiphertext],
  );
  return rows[0]!;
}

/** Ordered by id, the cursor of the next page. */
export async function listWebhooks(q: Queryable, page: { limit: number; after?: string }): Promise<WebhookRow[]> {
  const { rows } = await q.query<WebhookRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE ($1::uuid IS NULL OR id > $1::uuid) ORDER BY id LIMIT $2`,
    [page.after ?? null, page.limit],
  );
  return rows;
}

export async function findWebhook(q: Queryable, id: string): Promise<WebhookRow | undefined> {
  const { rows } = await q.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = $1`, [id]);
  return rows[0];
}

/** Locks the row for a change in this transaction (FOR NO KEY UPDATE: the trigger's foreign-key checks do not wait for it). */
export async function findWebhookForUpdate(q: Queryable, id: string): Promise<WebhookRow | undefined> {
  const { rows } = await q.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = $1 FOR NO KEY UPDATE`, [id]);
  return rows[0];
}

export async function updateWebhook(
  q: Queryable,
  id: string,
  w: { url: string; events: string[]; description: string; enabled: boolean },
): Promise<WebhookRow> {
  const { rows } = await q.query<WebhookRow>(
    `UPDATE webhook_endpoints SET url = $2, events = $3, description = $4, enabled = $5, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, w.url, w.events, w.description, w.enabled],
  );
  return rows[0]!;
}

/** Its messages go with it (ON DELETE CASCADE). */
export async function deleteWebhook(q: Queryable, id: string): Promise<void> {
  await q.query('DELETE FROM webhook_endpoints WHERE id = $1', [id]);
}

/** The current secret becomes the previous one, which still signs until `previousUntilSeconds` from now. */
export async function rotateWebhookSecret(q: Queryable, id: string, secretCiphertext: Buffer, previousForSeconds: number): Promise<WebhookRow> {
  const { rows } = await q.query<WebhookRow>(
    `UPDATE webhook_endpoints
        SET previous_secret_ciphertext = secret_ciphertext, previous_secret_until = now() + make_interval(secs => $3),
            secret_ciphertext = $2, updated_at = now()
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, secretCiphertext, previousForSeconds],
  );
  return rows[0]!;
}

export interface SealedWebhookSecrets {
  id: string;
  secret_ciphertext: Buffer;
  previous_secret_ciphertext: Buffer | null;
}

/** Every endpoint's sealed secrets, locked, for `keys rewrap`. */
export async function lockSealedWebhookSecrets(q: Queryable): Promise<SealedWebhookSecrets[]> {
  const { rows } = await q.query<SealedWebhookSecrets>('SELECT id, secret_ciphertext, previous_secret_ciphertext FROM webhook_endpoints ORDER BY id FOR NO KEY UPDATE');
  return rows;
}

/** A null leaves that ciphertext as it is. */
export async function updateSealedWebhookSecrets(q: Queryable, id: string, secret: Buffer | null, previous: Buffer | null): Promise<void> {
  await q.query(
    `UPDATE webhook_endpoints
        SET secret_ciphertext = COALESCE($2, secret_ciphertext), previous_secret_ciphertext = COALESCE($3, previous_secret_ciphertext)
      WHERE id = $1`,
    [id, secret, previous],
  );
}

/** The signing secrets sealed under MASTER_KEY, each bound to its endpoint: the current one, and the previous one while it still signs. */
export const SEALED_WEBHOOK_SECRETS: readonly SealedColumn[] = [
  { what: 'webhook secrets', table: 'webhook_endpoints', column: 'secret_ciphertext', associatedData: "'webhook:' || id::text" },
  {
    what: 'previous webhook secrets',
    table: 'webhook_endpoints',
    column: 'previous_secret_ciphertext',
    associatedData: "'webhook:' || id::text",
    inUse: 'previous_secret_until > now()',
  },
];
