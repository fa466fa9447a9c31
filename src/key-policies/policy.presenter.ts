import type { PolicyRecordRow } from './policy.repository';
import type { KeyPolicyRecord } from './policy.responses';

/** A key's policy, field by field; nothing else of the row goes out. */
export function presentPolicy(row: PolicyRecordRow): KeyPolicyRecord {
  return {
    expires_at: row.expires_at,
    enabled: row.enabled,
    allowed_addresses: row.allowed_addresses,
    permissions: row.permissions,
    rate_limit: row.rate_limit === null ? null : { limit: row.rate_limit, window_seconds: row.rate_limit_window_seconds! },
    credits:
      row.credits_remaining === null
        ? null
        : {
            remaining: row.credits_remaining,
            refill: row.credits_refill_interval === null ? null : { amount: row.credits_refill_amount!, interval: row.credits_refill_interval },
          },
    max_idle_days: row.max_idle_days,
    created_at: row.created_at,
    last_used: row.last_used,
    disabled_reason: row.disabled_reason,
  };
}
