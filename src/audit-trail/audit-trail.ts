import type { Queryable } from '../db/database';
import type { AuditContext, AuditEvent, AuditEventType } from '../shared/audit-context';

const INSERT_COLUMNS = 'type, actor, appname, username, client_address, request_id, details';

/**
 * Records one event and returns its id; inside a transaction it commits or rolls back with the
 * change it describes.
 */
export async function recordAuditEvent(q: Queryable, ctx: AuditContext, event: AuditEvent): Promise<string> {
  const { rows } = await q.query<{ id: string }>(`INSERT INTO audit_events (${INSERT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`, [
    event.type,
    ctx.actor,
    event.appname ?? null,
    event.username ?? null,
    ctx.clientAddress,
    ctx.requestId,
    event.details ?? {},
  ]);
  return rows[0]!.id;
}

/**
 * The body of a data-modifying CTE recording one event per row of `source`, so that a statement
 * which changes something and records it is one round trip and the event exists exactly when the
 * change does. Each value is an SQL expression over `source` and the statement's parameters
 * (written in code, never from input).
 */
export function auditInsertFrom(
  source: string,
  e: { type: AuditEventType; actor: string; appname?: string; username?: string; clientAddress: string; requestId: string; details: string },
): string {
  return `INSERT INTO audit_events (${INSERT_COLUMNS})
          SELECT '${e.type}', ${e.actor}, ${e.appname ?? 'NULL'}, ${e.username ?? 'NULL'}, ${e.clientAddress}, ${e.requestId}, ${e.details}
            FROM ${source}`;
}

/**
 * Deletes at most `batchSize` (1 to 1,000) events older than the retention in audit_retention and
 * returns how many (0 when the retention is 0). Only through prune_audit_events() (migrations/0009):
 * the trail refuses every other DELETE, and a runtime role without DELETE rights may prune through
 * it all the same, but cannot choose the retention, which the function reads from the table.
 */
export async function pruneAuditEvents(q: Queryable, batchSize: number): Promise<number> {
  const { rows } = await q.query<{ deleted: number }>('SELECT prune_audit_events($1) AS deleted', [batchSize]);
  return rows[0]!.deleted;
}

const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * Makes `days` the retention prune_audit_events() applies (0 keeps every event) and returns the
 * retention now in force. Only the schema owner may write it: over a role that may only read it
 * (the runtime role, apikeys_runtime), a different retention is left as the owner set it, and that
 * one is returned, so the caller can say so.
 */
export async function setAuditRetention(q: Queryable, days: number): Promise<number> {
  const { rows } = await q.query<{ days: number }>('SELECT days FROM audit_retention');
  const inForce = rows[0]!.days;
  if (inForce === days) return days;
  try {
    await q.query('UPDATE audit_retention SET days = $1', [days]);
    return days;
  } catch (err) {
    if ((err as { code?: string }).code === INSUFFICIENT_PRIVILEGE) return inForce;
    throw err;
  }
}
