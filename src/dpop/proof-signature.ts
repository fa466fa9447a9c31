import { verify, type KeyObject } from 'node:crypto';
import { es256Holds } from '../crypto/es256';
import type { DpopSigningAlgorithm } from '../shared/dpop';

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
  try {
    if (alg === 'ES256') return es256Holds(key, signingInput, bytes);
    // RS256 is RSASSA-PKCS1-v1_5 with SHA-256 (node:crypto's default padding); EdDSA and Ed25519 take no digest.
    return verify(alg === 'RS256' ? 'sha256' : null, Buffer.from(signingInput), key, bytes);
  } catch {
    return false;
  }
}
