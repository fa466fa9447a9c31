import type { Queryable } from '../db/database';

/**
 * Forgets at most `batchSize` jti values whose tokens can no longer be presented (past exp plus
 * leeway) and returns how many.
 */
export async function deleteExpiredRequestTokenJtis(q: Queryable, leewaySeconds: number, batchSize: number): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM request_token_jtis
      WHERE (api_key_id, jti) IN (SELECT api_key_id, jti FROM request_token_jtis WHERE expires_at < now() - make_interval(secs => $1) LIMIT $2)`,
    [leewaySeconds, batchSize],
  );
  return rowCount ?? 0;
}
