import type { Response } from 'supertest';
import { ERROR_STATUS } from '../../../src/shared/errors';
import type { TestApp } from '../../helpers/app';
import { bearer } from '../../helpers/factories';
import { claimsOf } from '../../helpers/tokens';
import { headerOf, signAsymmetric } from '../auth/support';

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

/** A token with all of our claims and our kid (copied from a real one), signed by a key that is not ours. */
export function foreignlySigned(ourToken: string): string {
  return signAsymmetric(claimsOf(ourToken), 'ES256', headerOf(ourToken).kid as string);
}

const NAME_BY_STATUS = Object.fromEntries(Object.entries(ERROR_STATUS).map(([name, status]) => [status, name]));

/** The contract's error body: exactly {status, name, message}, status equal to the HTTP status. */
export function expectError(res: Response, status: number): void {
  expect({ status: res.status, type: res.headers['content-type'], body: res.body }).toEqual({
    status,
    type: expect.stringMatching(/^application\/json/),
    body: { status, name: NAME_BY_STATUS[status], message: expect.stringMatching(/\S/) },
  });
}
