import { badRequest } from '../shared/errors';
import { parseAllowedEntry } from './addresses';
import type { DisabledReason } from './policy';
import type { PolicyWrite } from './policy.repository';
import type { PolicyInput, PutPolicyInput } from './policy.schemas';
import type { KeyPolicyRecord } from './policy.responses';

const DAY_SECONDS = 86_400;

/** What a policy is written under: the moment, KEY_MAX_LIFETIME_DAYS, and where the policy sits in the body (for messages). */
export interface PolicyContext {
  /** Unix seconds. */
  now: number;
  maxLifetimeDays: number | undefined;
  /** The field path of the policy in the request: `body` for a PUT, `body.policy` for a create. */
  at: string;
}

/**
 * The expiry a create (or import) or a PUT asks for, checked against the contract: in the future, and
 * within KEY_MAX_LIFETIME_DAYS when that is set. A create that gives none then gets the longest
 * lifetime; a PUT must give one (keys that exist keep theirs until their policy is next written).
 */
function expiryOf(given: number | null | undefined, ctx: PolicyContext, kind: 'create' | 'put'): number | null {
  const field = `${ctx.at}.expires_at`;
  const ceiling = ctx.maxLifetimeDays === undefined ? undefined : Math.floor(ctx.now) + ctx.maxLifetimeDays * DAY_SECONDS;
  if (given === undefined && kind === 'create') return ceiling ?? null;
  if (given === undefined || given === null) {
    if (ceiling === undefined) return null;
    throw badRequest(`${field}: is required while KEY_MAX_LIFETIME_DAYS is set: a time at most ${ctx.maxLifetimeDays} days from now (at most ${ceiling})`);
  }
  if (given <= ctx.now) throw badRequest(`${field}: must be in the future`);
  if (ceiling !== undefined && given > ceiling) {
    throw badRequest(`${field}: must be at most ${ctx.maxLifetimeDays} days from now (KEY_MAX_LIFETIME_DAYS): at most ${ceiling}`);
  }
  return given;
}

/**
 * A PUT's expiry, checked (400) without the stored policy, so that the service can check it before
 * the role and the key's existence (the contract's 400 before 403 and 404).
 */
export function putExpiryOf(input: PutPolicyInput, ctx: PolicyContext): number | null {
  return expiryOf(input.expires_at, ctx, 'put');
}

/** The normalised networks of entries the schema already checked (parseAllowedEntry). */
function networksOf(entries: readonly string[]): string[] {
  return entries.map((entry) => {
    const parsed = parseAllowedEntry(entry);
    if ('problem' in parsed) throw new Error('allowed_addresses must be checked by the schema first');
    return parsed.normalised;
  });
}

/** The policy of a key being created (or imported), as stored. */
export function newPolicy(input: PolicyInput | undefined, ctx: PolicyContext): PolicyWrite {
  const p = input ?? { enabled: true, allowed_addresses: [], permissions: [], rate_limit: null, credits: null, max_idle_days: null };
  return {
    expiresAt: expiryOf(input?.expires_at, ctx, 'create'),
    enabled: p.enabled,
    disabledReason: p.enabled ? null : 'manual',
    allowedAddresses: p.allowed_addresses,
    allowedNetworks: networksOf(p.allowed_addresses),
    permissions: p.permissions,
    rateLimit: p.rate_limit,
    credits: p.credits,
    maxIdleDays: p.max_idle_days,
  };
}

/** The settable fields as a record shows them, for comparing a PUT with what is stored. */
const SETTABLE = ['expires_at', 'enabled', 'allowed_addresses', 'permissions', 'rate_limit', 'credits', 'max_idle_days'] as const;
type Settable = (typeof SETTABLE)[number];

/** What a PUT changes: the policy to store, and each changed field before and after (api_key.policy_changed). */
export interface PolicyChange {
  write: PolicyWrite;
  changes: Partial<Record<Settable, { before: unknown; after: unknown }>>;
  /** The key turns off (manual) or on with this PUT. */
  switched: 'off' | 'on' | undefined;
}

/**
 * A PUT of a key's policy over the `current` one (its credits as of now): replaces every settable field
 * (omitted: its default), refuses a read-only field that differs from the stored one (400 naming it),
 * and leaves the credits counter alone when the PUT gives the credits as they stand.
 */
export function changedPolicy(input: PutPolicyInput, current: KeyPolicyRecord, ctx: PolicyContext): PolicyChange {
  for (const field of ['created_at', 'last_used', 'disabled_reason'] as const) {
    if (input[field] !== undefined && input[field] !== current[field]) {
      throw badRequest(`${ctx.at}.${field}: is read-only; it may be sent only as stored (${JSON.stringify(current[field])})`);
    }
  }
  const after: Pick<KeyPolicyRecord, Settable> = {
    expires_at: putExpiryOf(input, ctx),
    enabled: input.enabled,
    allowed_addresses: input.allowed_addresses,
    permissions: input.permissions,
    rate_limit: input.rate_limit,
    credits: input.credits,
    max_idle_days: input.max_idle_days,
  };
  const changes: PolicyChange['changes'] = {};
  for (const field of SETTABLE) {
    if (JSON.stringify(after[field]) !== JSON.stringify(current[field])) changes[field] = { before: current[field], after: after[field] };
  }
  const disabledReason: DisabledReason | null = after.enabled ? null : (current.disabled_reason ?? 'manual');
  return {
    write: {
      expiresAt: after.expires_at,
      enabled: after.enabled,
      disabledReason,
      allowedAddresses: after.allowed_addresses,
      allowedNetworks: networksOf(after.allowed_addresses),
      permissions: after.permissions,
      rateLimit: after.rate_limit,
      credits: changes.credits ? after.credits : 'unchanged',
      maxIdleDays: after.max_idle_days,
    },
    changes,
    switched: after.enabled === current.enabled ? undefined : after.enabled ? 'on' : 'off',
  };
}
