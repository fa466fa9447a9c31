import type { Response } from 'supertest';
import type { TestApp } from '../../helpers/app';
import type { TestApiKey } from '../../helpers/factories';
import { signRequestToken } from '../../helpers/tokens';

/** Shared bits of the OAuth 2.0 surface tests: the endpoints, how clients call them, and what the database shows. */

export const OAUTH2 = {
  token: '/oauth2/token',
  revoke: '/oauth2/revoke',
  introspect: '/oauth2/introspect',
} as const;

export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** The loopback address the test server sees, as req.ip gives it (IPv4 or IPv4-mapped IPv6). */
export const LOOPBACK = /^(::ffff:)?127\.0\.0\.1$/;

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** RFC 6749 §2.3.1: Basic of the form-urlencoded client_id and secret. */
export const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id).replaceAll('%20', '+')}:${encodeURIComponent(secret).replaceAll('%20', '+')}`).toString('base64')}`;

export type Encoding = 'form' | 'json';

export interface CallOptions {
  /** Form-urlencoded (the default, as OAuth clients send it) or JSON. */
  as?: Encoding;
  authorization?: string;
  /** Further headers, e.g. X-Forwarded-For behind TRUST_PROXY. */
  headers?: Record<string, string>;
}

/** POST to one of the OAuth 2.0 endpoints, as a form (or JSON), with an optional Authorization header. */
export function post(t: TestApp, path: string, body: Record<string, string> | string, options: CallOptions = {}) {
  let req = t.http().post(path);
  if (options.authorization !== undefined) req = req.set('Authorization', options.authorization);
  for (const [name, value] of Object.entries(options.headers ?? {})) req = req.set(name, value);
  return options.as === 'json' ? req.send(body) : req.type('form').send(body);
}

/** POST /oauth2/token. */
export const tokenRequest = (t: TestApp, body: Record<string, string> | string, options: CallOptions = {}) => post(t, OAUTH2.token, body, options);

/** A request token of this key as client libraries send it to the token endpoint (claims may be replaced). */
export const assertionOf = (key: TestApiKey, claims: Record<string, unknown> = {}) => signRequestToken(key.appname, key.appkey, { claims });

/**
 * What a refused request must leave as it was: every session (and its current refresh token), every
 * key's last login, the replay records, and every audit event but the login.failed a refusal adds.
 */
export async function stateOf(t: TestApp): Promise<Record<string, unknown>> {
  const [sessions, keys, jtis, events] = await Promise.all([
    t.db.query('SELECT id, refresh_jti, revoked_at, scope, client_id FROM sessions ORDER BY id'),
    t.db.query('SELECT appname, last_login, last_ip FROM api_keys ORDER BY appname'),
    t.db.query('SELECT api_key_id, jti FROM request_token_jtis ORDER BY api_key_id, jti'),
    t.db.query("SELECT id, type FROM audit_events WHERE type <> 'login.failed' ORDER BY id"),
  ]);
  return { sessions: sessions.rows, keys: keys.rows, jtis: jtis.rows, events: events.rows };
}

export interface AuditRow {
  type: string;
  actor: string;
  appname: string | null;
  username: string | null;
  client_address: string | null;
  details: Record<string, unknown>;
}

/** The audit events recorded while serving this response (matched by its X-Request-Id). */
export async function eventsOf(t: TestApp, res: Response): Promise<AuditRow[]> {
  const requestId = res.headers['x-request-id'];
  if (!requestId) throw new Error('the response carries no X-Request-Id');
  const { rows } = await t.db.query<AuditRow>(
    'SELECT type, actor, appname, username, client_address, details FROM audit_events WHERE request_id = $1 ORDER BY id',
    [requestId],
  );
  return rows;
}

export interface SessionRow {
  id: string;
  user_id: string | null;
  api_key_id: string | null;
  revoked_at: Date | null;
  client_id: string | null;
  scope: string | null;
  id_token_client: boolean;
}

/** The session row behind a token response's `session-state`. */
export async function sessionOf(t: TestApp, sessionId: string): Promise<SessionRow | undefined> {
  const { rows } = await t.db.query<SessionRow>(
    'SELECT id, user_id, api_key_id, revoked_at, client_id, scope, id_token_client FROM sessions WHERE id = $1',
    [sessionId],
  );
  return rows[0];
}

/** The key's last login as the database holds it. */
export async function lastLoginOf(t: TestApp, appname: string): Promise<{ last_login: string | null; last_ip: string | null }> {
  const { rows } = await t.db.query<{ last_login: string | null; last_ip: string | null }>(
    'SELECT last_login, last_ip FROM api_keys WHERE appname = $1',
    [appname],
  );
  return rows[0]!;
}

/** The number of sessions in the database. */
export async function sessionCount(t: TestApp): Promise<number> {
  const { rows } = await t.db.query<{ n: string }>('SELECT count(*) AS n FROM sessions');
  return Number(rows[0]!.n);
}
