import { preparedStatement, type Queryable } from '../db/database';
import type { Role } from '../shared/principals';

export interface UserRow {
  id: string;
  username: string;
  password_hash: string;
  role: Role | null;
  disabled: boolean;
  created_at: Date;
  /** The last password login; null before the first (migrations/0025). */
  last_login: Date | null;
}

const COLUMNS = 'id, username, password_hash, role, disabled, created_at, last_login';

const FIND_BY_USERNAME = preparedStatement('users.find', `SELECT ${COLUMNS} FROM users WHERE username = $1`);

export async function findUserByUsername(q: Queryable, username: string): Promise<UserRow | undefined> {
  const { rows } = await q.queryPrepared<UserRow>(FIND_BY_USERNAME, [username]);
  return rows[0];
}

/**
 * Locks, for the rest of the transaction, the user named $1 and every enabled admin, all in id order:
 * a change that could leave no enabled admin judges the others while none of them can change, and two
 * such changes at once (two admins demoting each other) lock in the same order, so the second waits
 * for the first and then sees its outcome rather than deadlocking.
 */
export async function lockUserAndEnabledAdmins(q: Queryable, username: string): Promise<UserRow[]> {
  const { rows } = await q.query<UserRow>(
    `SELECT ${COLUMNS} FROM users WHERE username = $1 OR (role = 'admin' AND NOT disabled) ORDER BY id FOR UPDATE`,
    [username],
  );
  return rows;
}

/** Locks the row for the rest of the transaction. */
export async function findUserForUpdate(q: Queryable, username: string): Promise<UserRow | undefined> {
  const { rows } = await q.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE username = $1 FOR UPDATE`, [username]);
  return rows[0];
}

/** A page ordered by username in byte order (the column is COLLATE "C"), after `after` when given. */
export async function listUsers(q: Queryable, page: { limit: number; after?: string }): Promise<UserRow[]> {
  const { rows } = await q.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE $1::text IS NULL OR username > $1::text ORDER BY username LIMIT $2`, [
    page.after ?? null,
    page.limit,
  ]);
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

/** Sets role and disabled together; returns the row as it is now. */
export async function updateUserStatus(q: Queryable, id: string, status: { role: Role | null; disabled: boolean }): Promise<UserRow> {
  const { rows } = await q.query<UserRow>(`UPDATE users SET role = $2, disabled = $3, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`, [
    id,
    status.role,
    status.disabled,
  ]);
  return rows[0]!;
}

export async function updateUserPassword(q: Queryable, id: string, passwordHash: string): Promise<void> {
  await q.query('UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1', [id, passwordHash]);
}

/**
 * Replaces the hash only if it is still the one given: a re-hash at login must not undo a password
 * changed meanwhile. updated_at is left alone: the password did not change.
 */
export async function replacePasswordHash(q: Queryable, userId: string, currentHash: string, newHash: string): Promise<boolean> {
  const { rowCount } = await q.query('UPDATE users SET password_hash = $3 WHERE id = $1 AND password_hash = $2', [userId, currentHash, newHash]);
  return (rowCount ?? 0) > 0;
}

export async function deleteUserById(q: Queryable, id: string): Promise<void> {
  await q.query('DELETE FROM users WHERE id = $1', [id]);
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
