import type { Queryable } from '../db/database';

/**
 * Deletes at most `batchSize` ended sessions (revoked, or past their end) and returns how many: they
 * can no longer authenticate anything, and a refresh token naming one is refused all the same once
 * it is gone. Both conditions are indexed, so a batch never scans the live sessions.
 */
export async function deleteEndedSessions(q: Queryable, batchSize: number): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM sessions
      WHERE id IN (SELECT id FROM sessions WHERE revoked_at IS NOT NULL OR expires_at < now() LIMIT $1)`,
    [batchSize],
  );
  return rowCount ?? 0;
}
