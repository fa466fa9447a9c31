import type { Response } from 'supertest';
import type { AuditEventRecord } from '../../../src/audit-events/audit-events.responses';
import type { TestApp } from '../../helpers/app';
import { bearer, createUser, loginAs, type TestUser } from '../../helpers/factories';

/** Shared bits for the audit trail tests: the route, finding events through it, and reading the table. */

export const AUDIT = '/api/v1/audit-events';

/** The loopback address the test server sees, as req.ip gives it (IPv4 or IPv4-mapped IPv6). */
export const LOOPBACK = /^(::ffff:)?127\.0\.0\.1$/;

export type Query = Record<string, string | number | string[]>;

export interface Admin extends TestUser {
  token: string;
}

/** A fresh admin user, logged in: its username is what `actor` shows for what it does. */
export async function newAdmin(t: TestApp): Promise<Admin> {
  const user = await createUser(t, { role: 'admin' });
  return { ...user, token: (await loginAs(t, user)).access_token };
}

/** GET /api/v1/audit-events with this token and query. */
export function getEvents(t: TestApp, token: string, query: Query = {}) {
  return t.http().get(AUDIT).query(query).set(bearer(token));
}

/** The events the route lists for this query (up to 1000, newest first), read by an admin. */
export async function eventsWhere(t: TestApp, adminToken: string, query: Query): Promise<AuditEventRecord[]> {
  const res = await getEvents(t, adminToken, { limit: 1000, ...query });
  if (res.status !== 200) throw new Error(`listing audit events failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as AuditEventRecord[];
}

/** The events recorded while serving this response (matched by its X-Request-Id). */
export async function eventsOfRequest(t: TestApp, adminToken: string, res: Response, query: Query = {}): Promise<AuditEventRecord[]> {
  const requestId = res.headers['x-request-id'];
  if (!requestId) throw new Error('the response carries no X-Request-Id');
  return (await eventsWhere(t, adminToken, query)).filter((e) => e.request_id === requestId);
}

/** The ids of these events, in the order given. */
export const idsOf = (events: readonly AuditEventRecord[]) => events.map((e) => e.id);

/** Every row of the audit table as JSON text, all columns: where a leaked secret would show. */
export async function auditTableText(t: TestApp): Promise<string> {
  const { rows } = await t.db.query<{ row: string }>('SELECT row_to_json(e)::text AS row FROM audit_events e ORDER BY id');
  return rows.map((r) => r.row).join('\n');
}

/** Every row of the audit table, all columns, in id order: to show that nothing changed. */
export async function auditTableRows(t: TestApp): Promise<Record<string, unknown>[]> {
  const { rows } = await t.db.query('SELECT * FROM audit_events ORDER BY id');
  return rows;
}
