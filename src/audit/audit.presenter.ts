import type { AuditEventRow } from './audit.repository';
import type { AuditEventType } from './audit-event';

export interface AuditEventRecord {
  id: number;
  occurred_at: string;
  type: AuditEventType;
  actor: string;
  appname: string | null;
  username: string | null;
  client_address: string | null;
  request_id: string | null;
  details: Record<string, unknown>;
}

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
