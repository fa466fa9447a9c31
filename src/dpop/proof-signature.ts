import { verify, type KeyObject } from 'node:crypto';
import type { DpopSigningAlgorithm } from '../shared/dpop';

/** RFC 7518 §3.4: an ES256 signature is R and S, 32 bytes each, side by side. */
const ES256_SIGNATURE_BYTES = 64;

/**
 * Whether a proof's signature (base64url) holds over its signing input for the key its header
 * carried, already imported and checked against `alg` by jose (proof-check.ts).
 *
 * Done in place with node:crypto rather than by jose's jwtVerify, which hands each verification to
 * libuv's thread pool: on a busy machine the pool thread it wakes takes the main thread's core, and a
 * DPoP request cost more than it does in place (docs/performance.md, "DPoP and token exchange").
 */
export function proofSignatureHolds(alg: DpopSigningAlgorithm, key: KeyObject, signingInput: string, signature: string): boolean {
  const bytes = Buffer.from(signature, 'base64url');
  const data = Buffer.from(signingInput);
  try {
    if (alg === 'ES256') return bytes.length === ES256_SIGNATURE_BYTES && verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, bytes);
    // RS256 is RSASSA-PKCS1-v1_5 with SHA-256 (node:crypto's default padding); EdDSA and Ed25519 take no digest.
    return verify(alg === 'RS256' ? 'sha256' : null, data, key, bytes);
  } catch {
    return false;
  }
}
