import type { TestApp } from '../../helpers/app';
import { bearer } from '../../helpers/factories';

export const OAUTH = {
  revoke: '/api/auth/bearer/revoke',
  introspect: '/api/auth/bearer/introspect',
  discovery: '/.well-known/openid-configuration',
} as const;

/** POST /api/auth/bearer/revoke as a form, as OAuth clients send it. */
export function revoke(t: TestApp, body: Record<string, string>) {
  return t.http().post(OAUTH.revoke).type('form').send(body);
}

/** POST /api/auth/bearer/introspect as a form, authenticated with the caller's access token. */
export function introspect(t: TestApp, callerToken: string, body: Record<string, string>) {
  return t.http().post(OAUTH.introspect).set(bearer(callerToken)).type('form').send(body);
}

/** Every session's id and revocation state, to show that a request changed nothing. */
export async function sessionStates(t: TestApp): Promise<{ id: string; revoked_at: Date | null }[]> {
  const { rows } = await t.db.query<{ id: string; revoked_at: Date | null }>('SELECT id, revoked_at FROM sessions ORDER BY id');
  return rows;
}
