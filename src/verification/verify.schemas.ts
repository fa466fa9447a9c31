import { z } from 'zod';
import { PERMISSION_PATTERN } from '../key-policies/policy.schemas';

const PERMISSION_RULE = 'must be 1 to 64 characters of a-z 0-9 : . _ -, starting with a letter or digit';
export const MAX_VERIFY_COST = 1_000;
const MAX_ASKED_PERMISSIONS = 100;

export const verifyKeyBody = z.strictObject({
  /**
   * The key as the caller of your API presented it (an appkey, `ak_...`, or an imported key's secret).
   * No cap of its own but the 64 KiB body: an imported secret may be of any length, and it
   * authenticates here as on the token routes' client_secret and on self-revocation, which have none.
   */
  key: z.string({ error: 'must be a string' }).min(1, 'must not be empty'),
  /** The IPv4 or IPv6 address of the key's caller: checked against the key's allowed_addresses when given. */
  address: z.union([z.ipv4(), z.ipv6()], { error: 'must be an IPv4 or IPv6 address' }).optional(),
  /** Names the caller needs: each must be one of the key's permissions or a scope of its role (openid counts as one of every key). */
  permissions: z
    .array(z.string({ error: PERMISSION_RULE }).regex(PERMISSION_PATTERN, PERMISSION_RULE), { error: 'must be an array of permission names' })
    .max(MAX_ASKED_PERMISSIONS, `must hold at most ${MAX_ASKED_PERMISSIONS} names`)
    .optional(),
  /** Credits this verification spends when VALID, 0 to 1000 (1 when omitted; 0 checks without spending). */
  cost: z.int({ error: 'must be a whole number' }).min(0, `must be 0 to ${MAX_VERIFY_COST}`).max(MAX_VERIFY_COST, `must be 0 to ${MAX_VERIFY_COST}`).default(1),
});
export type VerifyKeyInput = z.output<typeof verifyKeyBody>;
