import type { Queryable } from '../db/database';
import type { AuditEventType } from '../shared/audit-context';

export interface AuditEventRow {
  /** bigint: pg returns it as a string. */
  id: string;
  occurred_at: Date;
  type: AuditEventType;
  actor: string;
  appname: string | null;
  username: string | null;
  client_address: string | null;
  request_id: string | null;
  details: Record<string, unknown>;
}

export interface AuditEventFilter {
  limit: number;
  /** Only events older than this id (the cursor for the next page). */
  before?: number;
  appname?: string;
  username?: string;
  actor?: string;
  type?: AuditEventType;
  /** Inclusive. */
  since?: Date;
  /** Exclusive. */
  until?: Date;
}

/**
 * Newest first. Not a prepared statement on purpose: planned with the actual values, the unused
 * filters fold away and the one given can use its index.
 */
export async function listAuditEvents(q: Queryable, f: AuditEventFilter): Promise<AuditEventRow[]> {
  const { rows } = await q.query<AuditEventRow>(
    `SELECT id, occurred_at, type, actor, appname, username, client_address, request_id, details
       FROM audit_events
      WHERE ($1::bigint IS NULL OR id < $1::bigint)
        AND ($2::text IS NULL OR appname = $2::text)
        AND ($3::text IS NULL OR actor = $3::text)
        AND ($4::text IS NULL OR type = $4::text)
        AND ($5::timestamptz IS NULL OR occurred_at >= $5::timestamptz)
        AND ($6::timestamptz IS NULL OR occurred_at < $6::timestamptz)
        AND ($7::text IS NULL OR username = $7::text)
      ORDER BY id DESC
      LIMIT $8`,
    [f.before ?? null, f.appname ?? null, f.actor ?? null, f.type ?? null, f.since ?? null, f.until ?? null, f.username ?? null, f.limit],
  );
  return rows;
}
