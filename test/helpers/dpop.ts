import { createHash, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, SignJWT, type JWK } from 'jose';

/** What a DPoP proof is signed with in these tests: each algorithm the service takes. */
export type ProofAlgorithm = 'ES256' | 'EdDSA' | 'Ed25519' | 'RS256';

export interface ProofOptions {
  /** The access token the proof goes with: its hash is put in `ath`. */
  accessToken?: string;
  /** Seconds added to now for `iat`. */
  iatOffset?: number;
  /** Claims to add or replace; a claim set to undefined is left out. */
  claims?: Record<string, unknown>;
  /** Header fields to add or replace (typ, alg, jwk...). */
  header?: Record<string, unknown>;
}

/** A client's DPoP key: it makes proofs (RFC 9449 §4.2) with jose, as client libraries do. */
export interface DpopKey {
  alg: ProofAlgorithm;
  jwk: JWK;
  /** Its RFC 7638 thumbprint: the `cnf.jkt` of the tokens bound to it. */
  jkt: string;
  privateKey: KeyObject;
  /** A proof for `htm` and `htu` (the URI as the issuer names it), with a fresh jti. */
  proof(htm: string, htu: string, options?: ProofOptions): Promise<string>;
}

function keyPair(alg: ProofAlgorithm) {
  if (alg === 'ES256') return generateKeyPairSync('ec', { namedCurve: 'P-256' });
  if (alg === 'RS256') return generateKeyPairSync('rsa', { modulusLength: 2048 });
  return generateKeyPairSync('ed25519');
}

/** RFC 9449 §4.2: base64url SHA-256 of the access token. */
export const athOf = (accessToken: string) => createHash('sha256').update(accessToken).digest('base64url');

export async function dpopKey(alg: ProofAlgorithm = 'ES256'): Promise<DpopKey> {
  const { privateKey, publicKey } = keyPair(alg);
  const jwk = await exportJWK(publicKey);
  const jkt = await calculateJwkThumbprint(jwk, 'sha256');
  return {
    alg,
    jwk,
    jkt,
    privateKey,
    async proof(htm, htu, options = {}) {
      const payload: Record<string, unknown> = {
        jti: randomUUID(),
        htm,
        htu,
        iat: Math.floor(Date.now() / 1000) + (options.iatOffset ?? 0),
        ...(options.accessToken !== undefined && { ath: athOf(options.accessToken) }),
        ...options.claims,
      };
      for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
      const header = { alg, typ: 'dpop+jwt', jwk, ...options.header };
      return new SignJWT(payload).setProtectedHeader(header as { alg: string }).sign(privateKey);
    },
  };
}
