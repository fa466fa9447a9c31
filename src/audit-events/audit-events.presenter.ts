import type { AuditEventRow } from './audit-events.repository';
import type { AuditEventRecord } from './audit-events.responses';

/** The row as the API shows it: the id as a number, the time as ISO 8601. */
export function presentAuditEvent(row: AuditEventRow): AuditEventRecord {
  return {
    // Identity values stay far below 2^53, so the number is exact.
    id: Number(row.id),
    occurred_at: row.occurred_at.toISOString(),
    type: row.type,
    actor: row.actor,
    appname: row.appname,
    username: row.username,
    client_address: row.client_address,
    request_id: row.request_id,
    details: row.details,
  };
}
