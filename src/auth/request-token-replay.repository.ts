import type { Queryable } from '../db/database';

/**
 * Records a request token's jti for its key until the token expires. Returns false when the jti was
 * already recorded (a replay). The primary key makes concurrent replays lose too.
 */
export async function recordRequestTokenJti(
  q: Queryable,
  entry: { apiKeyId: string; jti: string; expiresAt: number },
): Promise<boolean> {
  const { rowCount } = await q.query(
    `INSERT INTO request_token_jtis (api_key_id, jti, expires_at)
     VALUES ($1, $2, to_timestamp($3))
     ON CONFLICT DO NOTHING`,
    [entry.apiKeyId, entry.jti, entry.expiresAt],
  );
  return (rowCount ?? 0) > 0;
}

/** Forgets jti values whose tokens can no longer be presented (past exp plus leeway). */
export async function deleteExpiredRequestTokenJtis(q: Queryable, leewaySeconds: number): Promise<number> {
  const { rowCount } = await q.query('DELETE FROM request_token_jtis WHERE expires_at < now() - make_interval(secs => $1)', [
    leewaySeconds,
  ]);
  return rowCount ?? 0;
}
