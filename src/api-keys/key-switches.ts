import type { Queryable } from '../db/database';
import { recordAuditEvent } from '../audit-trail/audit-trail';
import { revokeSessionsOfApiKeys } from '../sessions/revocation';
import type { AuditContext } from '../shared/audit-context';
import { SYSTEM_CONTEXT } from '../shared/audit-context';
import type { DisabledReason } from '../key-policies/policy';
import { disableIdleKeys, disableKey, markKeysExpired, type SwitchedKey } from '../key-policies/policy.repository';

/**
 * A key turning off, whatever turns it off (a PUT of its policy, the idle rule at use or in the
 * maintenance pass; later its holder or a leak report): its sessions end, so its tokens stop working
 * at once and do not come back when it is turned on again, and `api_key.disabled` records why. Run
 * in the transaction that turned the keys off.
 */
export async function recordKeysDisabled(tx: Queryable, ctx: AuditContext, keys: readonly SwitchedKey[], reason: DisabledReason): Promise<void> {
  if (keys.length === 0) return;
  const revoked = await revokeSessionsOfApiKeys(
    tx,
    keys.map((k) => k.id),
    `api key disabled (${reason})`,
  );
  for (const key of keys) {
    await recordAuditEvent(tx, ctx, { type: 'api_key.disabled', appname: key.appname, details: { reason, sessions_revoked: revoked.get(key.id) ?? 0 } });
  }
}

/**
 * Turns key `id` off for want of use, found idle at `at` (Unix seconds) by a login that judged it,
 * unless the database knows of a later use; true when it is off now (by this or before).
 */
export async function disableIdleKey(tx: Queryable, ctx: AuditContext, id: string, at: number): Promise<boolean> {
  const key = await disableKey(tx, id, 'idle', at);
  if (key) await recordKeysDisabled(tx, ctx, [key], 'idle');
  const { rows } = await tx.query<{ enabled: boolean }>('SELECT enabled FROM api_keys WHERE id = $1', [id]);
  return rows[0]?.enabled === false;
}

/** The maintenance pass's batch of the idle rule: at most `batchSize` keys idle at `at` turned off; answers how many. */
export async function disableIdleApiKeys(tx: Queryable, batchSize: number, at: number): Promise<number> {
  const keys = await disableIdleKeys(tx, batchSize, at);
  await recordKeysDisabled(tx, SYSTEM_CONTEXT, keys, 'idle');
  return keys.length;
}

/**
 * `api_key.expired`, once per key and expiry: for at most `batchSize` keys past their expiry at `at`
 * (the maintenance pass), or for key `id` alone (a login refused as expired). Answers how many.
 */
export async function recordExpiredApiKeys(tx: Queryable, ctx: AuditContext, batchSize: number, at: number, id?: string): Promise<number> {
  const keys = await markKeysExpired(tx, batchSize, at, id);
  for (const key of keys) {
    await recordAuditEvent(tx, ctx, { type: 'api_key.expired', appname: key.appname, details: { expires_at: key.expires_at } });
  }
  return keys.length;
}
