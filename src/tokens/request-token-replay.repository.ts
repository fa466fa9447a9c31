import type { Queryable } from '../db/database';

/** Forgets jti values whose tokens can no longer be presented (past exp plus leeway). */
export async function deleteExpiredRequestTokenJtis(q: Queryable, leewaySeconds: number): Promise<number> {
  const { rowCount } = await q.query('DELETE FROM request_token_jtis WHERE expires_at < now() - make_interval(secs => $1)', [
    leewaySeconds,
  ]);
  return rowCount ?? 0;
}
