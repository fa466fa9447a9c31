import { AllowedAddresses } from './addresses';
import type { KeyPolicy, RefillInterval } from './policy';

/**
 * The policy's rules as SQL, written once for every statement that reads a key: what a login's
 * judge reads of the row (policyColumns, policyOf), whether a key's tokens still hold (keyInForce,
 * addressAllowed), and its credits at a moment (creditsAt).
 */

const epoch = (column: string) => `extract(epoch FROM ${column})::float8`;

/** The columns of key row `k` a KeyPolicy is made of, named as PolicyRow names them. */
export const policyColumns = (k: string) =>
  `${k}.policy_version, ${k}.enabled, ${epoch(`${k}.expires_at`)} AS expires_at, ${k}.expiry_recorded,
   ${k}.allowed_addresses, ${k}.permissions, ${k}.rate_limit, ${k}.rate_limit_window_seconds,
   ${k}.credits_remaining IS NOT NULL AS has_credits, ${k}.credits_refill_interval,
   ${k}.max_idle_days, ${epoch(`GREATEST(${k}.last_used, ${k}.max_idle_set_at, ${k}.enabled_at)`)} AS idle_since`;

/** The names policyColumns gives its columns, for a statement that selects them again from a subquery. */
export const POLICY_COLUMN_NAMES = [
  'policy_version',
  'enabled',
  'expires_at',
  'expiry_recorded',
  'allowed_addresses',
  'permissions',
  'rate_limit',
  'rate_limit_window_seconds',
  'has_credits',
  'credits_refill_interval',
  'max_idle_days',
  'idle_since',
] as const satisfies readonly (keyof PolicyRow)[];

export interface PolicyRow {
  policy_version: number;
  enabled: boolean;
  expires_at: number | null;
  expiry_recorded: boolean;
  allowed_addresses: string[];
  permissions: string[];
  rate_limit: number | null;
  rate_limit_window_seconds: number | null;
  has_credits: boolean;
  credits_refill_interval: RefillInterval | null;
  max_idle_days: number | null;
  idle_since: number;
}

/** A KeyPolicy from the columns of policyColumns. */
export function policyOf(row: PolicyRow): KeyPolicy {
  return {
    version: row.policy_version,
    enabled: row.enabled,
    expiresAt: row.expires_at,
    expiryRecorded: row.expiry_recorded,
    addresses: AllowedAddresses.of(row.allowed_addresses),
    permissions: row.permissions,
    rateLimit: row.rate_limit === null ? null : { limit: row.rate_limit, windowSeconds: row.rate_limit_window_seconds! },
    credits: row.has_credits ? { refill: row.credits_refill_interval } : null,
    idle: row.max_idle_days === null ? null : { maxDays: row.max_idle_days, since: row.idle_since },
  };
}

/**
 * Key row `k` still lets its tokens work: on, and not past its end (contract, "Tokens follow the
 * key"). A deleted key has no row, and a regenerated one is the generation rule's business.
 */
export const keyInForce = (k: string) => `${k}.enabled AND (${k}.expires_at IS NULL OR ${k}.expires_at > now())`;

/**
 * The address `address` (an SQL expression of type inet, IPv4-mapped addresses already as IPv4: see
 * clientAddressText) is allowed by key row `k`'s policy, given as a list of networks that
 * parseAllowedEntry normalised. Never NULL: an unknown address is allowed only where every one is.
 */
export const addressAllowed = (networks: string, address: string) =>
  `(cardinality(${networks}) = 0 OR COALESCE(${address} <<= ANY (${networks}), false))`;

/** The credits of key row `k` at `at` (timestamptz), after any refill due by then; NULL: the key has no credits. */
export const creditsAt = (k: string, at: string) =>
  `api_key_credits_at(${k}.credits_remaining, ${k}.credits_refill_amount, ${k}.credits_refill_interval, ${k}.credits_updated_at, ${at})`;
