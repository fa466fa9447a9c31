import type { Queryable } from '../db/database';
import type { Role } from '../shared/principals';
import { IDLE_SLACK_SECONDS, type DisabledReason, type RefillInterval } from './policy';
import { creditsAt } from './policy-sql';

/** A key's policy as stored, with what the policy routes need of the key: which one, and its role (the role rules). */
export interface PolicyRecordRow {
  id: string;
  appname: string;
  role: Role | null;
  expires_at: number | null;
  enabled: boolean;
  allowed_addresses: string[];
  permissions: string[];
  rate_limit: number | null;
  rate_limit_window_seconds: number | null;
  /** After any refill due by the moment read at. */
  credits_remaining: number | null;
  credits_refill_amount: number | null;
  credits_refill_interval: RefillInterval | null;
  max_idle_days: number | null;
  created_at: number;
  last_used: number | null;
  disabled_reason: DisabledReason | null;
}

const seconds = (column: string) => `floor(extract(epoch FROM ${column}))::float8`;

// float8 rather than bigint, which pg returns as a string: exact for Unix seconds and credits up to 2^53.
const RECORD_COLUMNS = `id, appname, role, ${seconds('expires_at')} AS expires_at, enabled, allowed_addresses, permissions,
  rate_limit, rate_limit_window_seconds, ${creditsAt('api_keys', 'to_timestamp($2)')}::float8 AS credits_remaining,
  credits_refill_amount::float8 AS credits_refill_amount, credits_refill_interval, max_idle_days,
  ${seconds('created_at')} AS created_at, ${seconds('last_used')} AS last_used, disabled_reason`;

/** The policy of key `appname`, its credits as of `now` (Unix seconds). */
export async function findPolicyRecord(q: Queryable, appname: string, now: number): Promise<PolicyRecordRow | undefined> {
  const { rows } = await q.query<PolicyRecordRow>(`SELECT ${RECORD_COLUMNS} FROM api_keys WHERE appname = $1`, [appname, now]);
  return rows[0];
}

/** The same, the row locked until the transaction ends, so a check-then-write cannot race a login or another change. */
export async function lockPolicyRecord(q: Queryable, appname: string, now: number): Promise<PolicyRecordRow | undefined> {
  const { rows } = await q.query<PolicyRecordRow>(`SELECT ${RECORD_COLUMNS} FROM api_keys WHERE appname = $1 FOR UPDATE`, [appname, now]);
  return rows[0];
}

/** A policy to store. `credits` 'unchanged' leaves the counter and its refill alone (a PUT that gave them as they stand). */
export interface PolicyWrite {
  expiresAt: number | null;
  enabled: boolean;
  disabledReason: DisabledReason | null;
  allowedAddresses: readonly string[];
  /** The same entries normalised (parseAllowedEntry), for the checks made in SQL. */
  allowedNetworks: readonly string[];
  permissions: readonly string[];
  rateLimit: { limit: number; window_seconds: number } | null;
  credits: { remaining: number; refill: { amount: number; interval: RefillInterval } | null } | null | 'unchanged';
  maxIdleDays: number | null;
}

/**
 * Stores key `id`'s policy as of `now` (Unix seconds) and bumps its version, so every instance's kept
 * copy of the key is judged stale at its next login. The anchors move with the fields: turning the key
 * on again restarts its idle count (enabled_at), a new idle rule starts its own (max_idle_set_at), a
 * new expiry may be recorded again, new credits count from now.
 */
export async function writePolicy(q: Queryable, id: string, p: PolicyWrite, now: number): Promise<void> {
  const credits = p.credits === 'unchanged' ? undefined : p.credits;
  await q.query(
    `UPDATE api_keys
        SET policy_version = policy_version + 1,
            updated_at = now(),
            expiry_recorded = expiry_recorded AND expires_at IS NOT DISTINCT FROM to_timestamp($2),
            expires_at = to_timestamp($2),
            enabled_at = CASE WHEN $3 AND NOT enabled THEN to_timestamp($14) ELSE enabled_at END,
            enabled = $3,
            disabled_reason = $4,
            allowed_addresses = $5::text[],
            allowed_networks = $6::cidr[],
            permissions = $7::text[],
            rate_limit = $8,
            rate_limit_window_seconds = $9,
            credits_remaining = CASE WHEN $15 THEN $10::bigint ELSE credits_remaining END,
            credits_refill_amount = CASE WHEN $15 THEN $11::bigint ELSE credits_refill_amount END,
            credits_refill_interval = CASE WHEN $15 THEN $12::text ELSE credits_refill_interval END,
            credits_updated_at = CASE WHEN NOT $15 THEN credits_updated_at WHEN $10 IS NULL THEN NULL ELSE to_timestamp($14) END,
            max_idle_set_at = CASE WHEN $13::int IS NULL THEN NULL
                                   WHEN $13::int IS DISTINCT FROM max_idle_days THEN to_timestamp($14)
                                   ELSE max_idle_set_at END,
            max_idle_days = $13::int
      WHERE id = $1`,
    [
      id,
      p.expiresAt,
      p.enabled,
      p.disabledReason,
      p.allowedAddresses,
      p.allowedNetworks,
      p.permissions,
      p.rateLimit?.limit ?? null,
      p.rateLimit?.window_seconds ?? null,
      credits?.remaining ?? null,
      credits?.refill?.amount ?? null,
      credits?.refill?.interval ?? null,
      p.maxIdleDays,
      now,
      credits !== undefined,
    ],
  );
}

/** A key turned off: which, and its name for the audit trail. */
export interface SwitchedKey {
  id: string;
  appname: string;
}

/**
 * Key row `api_keys` has gone `max_idle_days` without use at $at (timestamptz), counted from the latest
 * of its anchors, plus IDLE_SLACK_SECONDS (a constant): a use not yet written to `last_used` is no idleness.
 */
const IDLE_AT = (at: string) =>
  `api_keys.max_idle_days IS NOT NULL
   AND GREATEST(api_keys.last_used, api_keys.max_idle_set_at, api_keys.enabled_at)
       <= ${at} - make_interval(days => api_keys.max_idle_days, secs => ${IDLE_SLACK_SECONDS})`;

/**
 * Turns key `id` off with `reason`, and answers it; undefined when it was off already (it keeps its
 * first reason) or gone, or, with `idleAt` (Unix seconds), when it is not idle at that moment after all
 * (a use on another instance that the kept copy judged by did not know of).
 */
export async function disableKey(q: Queryable, id: string, reason: DisabledReason, idleAt?: number): Promise<SwitchedKey | undefined> {
  const { rows } = await q.query<SwitchedKey>(
    `UPDATE api_keys SET enabled = false, disabled_reason = $2, policy_version = policy_version + 1, updated_at = now()
      WHERE id = $1 AND enabled AND ($3::float8 IS NULL OR (${IDLE_AT('to_timestamp($3::float8)')}))
      RETURNING id, appname`,
    [id, reason, idleAt ?? null],
  );
  return rows[0];
}

/** At most `batchSize` keys idle at `at` (Unix seconds) turned off (reason idle), skipping rows a login holds. */
export async function disableIdleKeys(q: Queryable, batchSize: number, at: number): Promise<SwitchedKey[]> {
  const { rows } = await q.query<SwitchedKey>(
    `UPDATE api_keys SET enabled = false, disabled_reason = 'idle', policy_version = policy_version + 1, updated_at = now()
      WHERE id IN (SELECT id FROM api_keys WHERE max_idle_days IS NOT NULL AND enabled AND ${IDLE_AT('to_timestamp($2)')}
                    LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING id, appname`,
    [batchSize, at],
  );
  return rows;
}

/** A key whose expiry is now on record: its name and the moment (Unix seconds) it expired. */
export interface ExpiredKey {
  appname: string;
  expires_at: number;
}

/**
 * Marks at most `batchSize` keys past their expiry at `at` (Unix seconds) as recorded, and answers
 * them, each once: the caller writes their api_key.expired events in the same transaction. `id` limits
 * it to one key (a login refused as expired).
 */
export async function markKeysExpired(q: Queryable, batchSize: number, at: number, id?: string): Promise<ExpiredKey[]> {
  const { rows } = await q.query<ExpiredKey>(
    `UPDATE api_keys SET expiry_recorded = true
      WHERE id IN (SELECT id FROM api_keys
                    WHERE expires_at IS NOT NULL AND NOT expiry_recorded AND expires_at <= to_timestamp($2)
                      AND ($3::uuid IS NULL OR id = $3::uuid)
                    ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING appname, ${seconds('expires_at')} AS expires_at`,
    [batchSize, at, id ?? null],
  );
  return rows;
}
