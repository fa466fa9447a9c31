import type { Queryable } from '../db/database';

/** Drops sessions that ended more than a day ago; they can no longer authenticate anything. */
export async function deleteEndedSessions(q: Queryable): Promise<number> {
  const { rowCount } = await q.query("DELETE FROM sessions WHERE expires_at < now() - interval '1 day'");
  return rowCount ?? 0;
}
