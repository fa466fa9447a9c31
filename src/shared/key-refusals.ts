/**
 * Why a key whose secret or signature checked out is refused all the same: its policy's checks, in
 * the contract's order ("Key policies"). One closed list for every edge: the token routes map a reason
 * to their own status or OAuth error, the audit trail records it as `token.refused`, and verification
 * (`POST /api/v1/keys/verify`) to its code.
 */
export const KEY_REFUSALS = ['disabled', 'expired', 'address_not_allowed', 'rate_limited', 'usage_exceeded'] as const;
export type KeyRefusal = (typeof KEY_REFUSALS)[number];

/** What the caller is told: only once its secret or signature checked out (an unknown key or a wrong secret is told nothing). */
export const KEY_REFUSAL_MESSAGES: Record<KeyRefusal, string> = {
  disabled: 'API key disabled',
  expired: 'API key expired',
  address_not_allowed: 'address not allowed for this API key',
  rate_limited: 'API key rate limit reached',
  usage_exceeded: 'API key usage limit reached',
};
