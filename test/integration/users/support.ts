import type { TestApp } from '../../helpers/app';
import { bearer } from '../../helpers/factories';

/** Shared bits for the users API tests. */

export const USERS = '/api/v1/users';
export const ME = '/api/v1/me';

export const userPath = (username: string) => `${USERS}/${encodeURIComponent(username)}`;

/** The fields of a user record, exactly; what a hash or an id would break. */
export const RECORD_FIELDS = ['created_at', 'disabled', 'last_login', 'role', 'username'];

/** A call to the users API with this token. */
export const usersApi = (t: TestApp, token: string) => ({
  list: (query = '') => t.http().get(`${USERS}${query}`).set(bearer(token)),
  create: (body: unknown) => t.http().post(USERS).set(bearer(token)).send(body as object),
  get: (username: string) => t.http().get(userPath(username)).set(bearer(token)),
  update: (username: string, body: unknown) => t.http().put(userPath(username)).set(bearer(token)).send(body as object),
  remove: (username: string) => t.http().delete(userPath(username)).set(bearer(token)),
  resetPassword: (username: string, body: unknown) => t.http().put(`${userPath(username)}/password`).set(bearer(token)).send(body as object),
});

/** The users table as text, every column: where a hash would show if an answer carried one. */
export async function passwordHashes(t: TestApp): Promise<string[]> {
  const { rows } = await t.db.query<{ password_hash: string }>('SELECT password_hash FROM users');
  return rows.map((r) => r.password_hash);
}
