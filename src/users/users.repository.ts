import { preparedStatement, type Queryable } from '../db/database';
import type { Role } from '../shared/principals';

export interface UserRow {
  id: string;
  username: string;
  password_hash: string;
  role: Role | null;
  disabled: boolean;
  created_at: Date;
}

const COLUMNS = 'id, username, password_hash, role, disabled, created_at';

const FIND_BY_USERNAME = preparedStatement('users.find', `SELECT ${COLUMNS} FROM users WHERE username = $1`);

export async function findUserByUsername(q: Queryable, username: string): Promise<UserRow | undefined> {
  const { rows } = await q.queryPrepared<UserRow>(FIND_BY_USERNAME, [username]);
  return rows[0];
}

/** Locks the row for the rest of the transaction. */
export async function findUserForUpdate(q: Queryable, username: string): Promise<UserRow | undefined> {
  const { rows } = await q.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE username = $1 FOR UPDATE`, [username]);
  return rows[0];
}

export async function listUsers(q: Queryable): Promise<UserRow[]> {
  const { rows } = await q.query<UserRow>(`SELECT ${COLUMNS} FROM users ORDER BY username`);
  return rows;
}

/** Inserts unless the username exists; returns the new row or undefined. */
export async function insertUserIfAbsent(
  q: Queryable,
  user: { username: string; passwordHash: string; role: Role | null },
): Promise<UserRow | undefined> {
  const { rows } = await q.query<UserRow>(
    `INSERT INTO users (username, password_hash, role) VALUES ($1, $2, $3)
     ON CONFLICT (username) DO NOTHING
     RETURNING ${COLUMNS}`,
    [user.username, user.passwordHash, user.role],
  );
  return rows[0];
}

export const updateUserRole = (q: Queryable, username: string, role: Role | null) =>
  updateOneColumn(q, 'UPDATE users SET role = $2, updated_at = now() WHERE username = $1', username, role);

export const updateUserPassword = (q: Queryable, username: string, passwordHash: string) =>
  updateOneColumn(q, 'UPDATE users SET password_hash = $2, updated_at = now() WHERE username = $1', username, passwordHash);

export const updateUserDisabled = (q: Queryable, username: string, disabled: boolean) =>
  updateOneColumn(q, 'UPDATE users SET disabled = $2, updated_at = now() WHERE username = $1', username, disabled);

/** `statement` sets one column to $2 for the user named $1; true when there was such a user. */
async function updateOneColumn(q: Queryable, statement: string, username: string, value: unknown): Promise<boolean> {
  const { rowCount } = await q.query(statement, [username, value]);
  return (rowCount ?? 0) > 0;
}

/**
 * Replaces the hash only if it is still the one given: a re-hash at login must not undo a password
 * changed meanwhile. updated_at is left alone: the password did not change.
 */
export async function replacePasswordHash(q: Queryable, userId: string, currentHash: string, newHash: string): Promise<boolean> {
  const { rowCount } = await q.query('UPDATE users SET password_hash = $3 WHERE id = $1 AND password_hash = $2', [userId, currentHash, newHash]);
  return (rowCount ?? 0) > 0;
}

export async function deleteUser(q: Queryable, username: string): Promise<boolean> {
  const { rowCount } = await q.query('DELETE FROM users WHERE username = $1', [username]);
  return (rowCount ?? 0) > 0;
}

export async function countUsers(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ count: string }>('SELECT count(*) AS count FROM users');
  return Number(rows[0]!.count);
}

/** Any user with the admin role, disabled ones included: the bootstrap admin is for a service with none. */
export async function anyAdminExists(q: Queryable): Promise<boolean> {
  const { rows } = await q.query<{ exists: boolean }>("SELECT EXISTS (SELECT 1 FROM users WHERE role = 'admin') AS exists");
  return rows[0]!.exists;
}
