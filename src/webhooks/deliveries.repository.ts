import type { Queryable } from '../db/database';
import type { AuditEventRow } from '../audit-events/audit-events.repository';
import type { DeliveryError } from './webhooks.responses';
import type { DeliveryStatus } from './webhooks.schemas';

export interface DeliveryRow {
  id: string;
  type: string;
  audit_event_id: string;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: DeliveryError | null;
  next_attempt_at: Date | null;
  created_at: Date;
}

const COLUMNS = 'id, type, audit_event_id, status, attempts, last_status_code, last_error, next_attempt_at, created_at';

/** One endpoint's messages, newest first (ids sort by creation: migrations/0031). */
export async function listDeliveries(
  q: Queryable,
  endpointId: string,
  page: { limit: number; before?: string; status?: DeliveryStatus },
): Promise<DeliveryRow[]> {
  const { rows } = await q.query<DeliveryRow>(
    `SELECT ${COLUMNS} FROM webhook_deliveries
      WHERE endpoint_id = $1 AND ($2::uuid IS NULL OR id < $2::uuid) AND ($3::text IS NULL OR status = $3::text)
      ORDER BY id DESC LIMIT $4`,
    [endpointId, page.before ?? null, page.status ?? null, page.limit],
  );
  return rows;
}

/** The message the trigger made of one event for one endpoint (a test message). */
export async function findDeliveryOfEvent(q: Queryable, endpointId: string, auditEventId: string): Promise<DeliveryRow | undefined> {
  const { rows } = await q.query<DeliveryRow>(`SELECT ${COLUMNS} FROM webhook_deliveries WHERE endpoint_id = $1 AND audit_event_id = $2`, [
    endpointId,
    auditEventId,
  ]);
  return rows[0];
}

/** An endpoint leased to this instance; what sending needs is read with each batch (readDueMessages). */
export interface LeasedEndpoint {
  id: string;
}

/**
 * Leases up to `limit` enabled endpoints that have due messages and no live lease, for `leaseMs`.
 * FOR NO KEY UPDATE SKIP LOCKED: two instances polling at once take different endpoints, and a row
 * another instance has just leased is re-checked against its new lease and passed over. (NO KEY: the
 * foreign-key checks of messages being written meanwhile do not wait.) One statement, so it holds
 * its locks for no longer than it runs, through PgBouncer's transaction pooling too.
 */
export async function leaseDueEndpoints(q: Queryable, leaseId: string, leaseMs: number, limit: number): Promise<LeasedEndpoint[]> {
  const { rows } = await q.query<LeasedEndpoint>(
    `UPDATE webhook_endpoints w
        SET lease_id = $1, leased_until = now() + $2 * interval '1 millisecond'
      WHERE w.id IN (
        SELECT e.id FROM webhook_endpoints e
         WHERE e.enabled AND (e.leased_until IS NULL OR e.leased_until < now())
           AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.next_attempt_at <= now())
         LIMIT $3
         FOR NO KEY UPDATE SKIP LOCKED)
      RETURNING w.id`,
    [leaseId, leaseMs, limit],
  );
  return rows;
}

/** Where and how a batch is sent: the endpoint as it is when the batch is read. */
export interface DeliveryTarget {
  url: string;
  enabled: boolean;
  secret_ciphertext: Buffer;
  /** Only while it still signs (24 hours after a rotation). */
  previous_secret_ciphertext: Buffer | null;
}

/** A due message with the audit event it reports (null fields when retention has deleted the event). */
export interface DueMessage {
  id: string;
  attempts: number;
  event: AuditEventRow | null;
}

type DueRow = DeliveryTarget & { id: string | null; attempts: number | null } & { [K in keyof AuditEventRow as `e_${K}`]: AuditEventRow[K] | null };

/**
 * The endpoint as it is now, with its oldest due messages in the order of their events (none while
 * it is disabled); undefined once it is deleted. Read together at every batch, so a new URL, a
 * rotated secret or a disabled endpoint is seen from the next batch, however long a busy endpoint
 * keeps its lease. A retry waiting for its time lets the messages after it through, so order holds
 * as far as retries allow.
 */
export async function readDueMessages(q: Queryable, endpointId: string, limit: number): Promise<{ target: DeliveryTarget; messages: DueMessage[] } | undefined> {
  const { rows } = await q.query<DueRow>(
    `SELECT w.url, w.enabled, w.secret_ciphertext,
            CASE WHEN w.previous_secret_until > now() THEN w.previous_secret_ciphertext END AS previous_secret_ciphertext,
            d.id, d.attempts, a.id AS e_id, a.occurred_at AS e_occurred_at, a.type AS e_type, a.actor AS e_actor, a.appname AS e_appname,
            a.username AS e_username, a.client_address AS e_client_address, a.request_id AS e_request_id, a.details AS e_details
       FROM webhook_endpoints w
       LEFT JOIN LATERAL (
         SELECT d.id, d.attempts, d.audit_event_id FROM webhook_deliveries d
          WHERE d.endpoint_id = w.id AND w.enabled AND d.status = 'pending' AND d.next_attempt_at <= now()
          ORDER BY d.audit_event_id, d.id
          LIMIT $2) d ON true
       LEFT JOIN audit_events a ON a.id = d.audit_event_id
      WHERE w.id = $1
      ORDER BY d.audit_event_id, d.id`,
    [endpointId, limit],
  );
  const first = rows[0];
  if (!first) return undefined;
  const target = { url: first.url, enabled: first.enabled, secret_ciphertext: first.secret_ciphertext, previous_secret_ciphertext: first.previous_secret_ciphertext };
  return { target, messages: rows.filter((r) => r.id !== null).map(dueMessageOf) };
}

function dueMessageOf(r: DueRow): DueMessage {
  return {
    id: r.id!,
    attempts: r.attempts!,
    event:
      r.e_id === null
        ? null
        : {
            id: r.e_id,
            occurred_at: r.e_occurred_at!,
            type: r.e_type!,
            actor: r.e_actor!,
            appname: r.e_appname,
            username: r.e_username,
            client_address: r.e_client_address,
            request_id: r.e_request_id,
            details: r.e_details!,
          },
  };
}

/** What one attempt came to. `retryInMs` is set when the message stays pending. */
export interface AttemptOutcome {
  id: string;
  status: DeliveryStatus;
  attempts: number;
  statusCode: number | null;
  error: DeliveryError | null;
  retryInMs: number | null;
}

/**
 * Records outcomes and renews the lease, in one statement, only while this instance still holds the
 * lease: an instance whose lease ran out (and another took over) records nothing. Returns whether
 * the lease was still held.
 */
export async function recordOutcomes(q: Queryable, endpointId: string, leaseId: string, leaseMs: number, outcomes: AttemptOutcome[]): Promise<boolean> {
  const { rows } = await q.query<{ held: boolean }>(
    `WITH lease AS (
       UPDATE webhook_endpoints SET leased_until = now() + $3 * interval '1 millisecond'
        WHERE id = $1 AND lease_id = $2
       RETURNING id
     ), outcome AS (
       SELECT * FROM unnest($4::uuid[], $5::text[], $6::int[], $7::int[], $8::text[], $9::float8[]) AS o(id, status, attempts, code, error, retry_ms)
     ), recorded AS (
       UPDATE webhook_deliveries d
          SET status = outcome.status, attempts = outcome.attempts, last_status_code = outcome.code, last_error = outcome.error,
              next_attempt_at = CASE WHEN outcome.status = 'pending' THEN now() + outcome.retry_ms * interval '1 millisecond' END
         FROM outcome, lease
        WHERE d.id = outcome.id AND d.endpoint_id = lease.id AND d.status = 'pending'
     )
     SELECT EXISTS (SELECT 1 FROM lease) AS held`,
    [
      endpointId,
      leaseId,
      leaseMs,
      outcomes.map((o) => o.id),
      outcomes.map((o) => o.status),
      outcomes.map((o) => o.attempts),
      outcomes.map((o) => o.statusCode),
      outcomes.map((o) => o.error),
      outcomes.map((o) => o.retryInMs),
    ],
  );
  return rows[0]!.held;
}

/** Gives the lease back, so any instance may take the endpoint at its next poll. */
export async function releaseLease(q: Queryable, endpointId: string, leaseId: string): Promise<void> {
  await q.query('UPDATE webhook_endpoints SET lease_id = NULL, leased_until = NULL WHERE id = $1 AND lease_id = $2', [endpointId, leaseId]);
}

/**
 * Deletes at most `batchSize` delivered or failed messages older than `retentionDays` (a pending
 * message is never deleted here). The ids sort by creation, so walking the primary key from its
 * start meets the old rows first.
 */
export async function pruneFinishedDeliveries(q: Queryable, retentionDays: number, batchSize: number): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM webhook_deliveries WHERE id IN (
       SELECT id FROM webhook_deliveries
        WHERE created_at < now() - make_interval(days => $1) AND status <> 'pending'
        ORDER BY id LIMIT $2)`,
    [retentionDays, batchSize],
  );
  return rowCount ?? 0;
}

/** Seconds since the oldest message that is due (to an enabled endpoint) became due; 0 when none is. */
export async function oldestDueAgeSeconds(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ age: number | null }>(
    `SELECT extract(epoch FROM now() - min(d.next_attempt_at))::float8 AS age
       FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.enabled
      WHERE d.status = 'pending' AND d.next_attempt_at <= now()`,
  );
  return Math.max(0, rows[0]?.age ?? 0);
}
