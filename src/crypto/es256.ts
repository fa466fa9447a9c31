import { sign, verify, type KeyObject } from 'node:crypto';

/**
 * ES256 as RFC 7518 §3.4 has it: ECDSA P-256 over SHA-256, the signature as R and S side by side
 * (IEEE P1363, 32 bytes each), not the DER that node:crypto gives by default.
 */
export const ES256_SIGNATURE_BYTES = 64;

const SIGNATURE = { dsaEncoding: 'ieee-p1363' } as const;

/** An ES256 signature of the signing input (a compact JWS's header and payload, as ASCII). */
export const es256Sign = (privateKey: KeyObject, signingInput: string): Buffer =>
  sign('sha256', Buffer.from(signingInput), { key: privateKey, ...SIGNATURE });

/** Whether an ES256 signature holds over the signing input for the public key; one of another length never does. */
export const es256Holds = (publicKey: KeyObject, signingInput: string, signature: Buffer): boolean =>
  signature.length === ES256_SIGNATURE_BYTES && verify('sha256', Buffer.from(signingInput), { key: publicKey, ...SIGNATURE }, signature);
