/**
 * What a verification answers (POST /api/v1/keys/verify), in the contract's order: the first that
 * applies wins. One closed list for the verify route, its OpenAPI schema and the usage counts.
 */
export const VERIFY_CODES = [
  'NOT_FOUND',
  'DISABLED',
  'EXPIRED',
  'ADDRESS_NOT_ALLOWED',
  'INSUFFICIENT_PERMISSIONS',
  'RATE_LIMITED',
  'USAGE_EXCEEDED',
  'VALID',
] as const;
export type VerifyCode = (typeof VERIFY_CODES)[number];
