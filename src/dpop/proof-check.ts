import { createHash, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, importJWK, type JWK } from 'jose';
import { ExpiringMap } from '../cache/expiring-map';
import { decodeSegment } from '../crypto/jws-segments';
import { DPOP_SIGNING_ALGORITHMS, type DpopSigningAlgorithm } from '../shared/dpop';
import { DpopProofError } from '../shared/errors';
import { proofSignatureHolds } from './proof-signature';

/** How far a proof's `iat` may lie from now, either way, in seconds: its whole acceptable life. */
export const PROOF_WINDOW_SECONDS = 60;

const MAX_PROOF_LENGTH = 8_192;
const MAX_JTI_LENGTH = 256;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
// No control characters: a jti is hashed into a replay record, and printed nowhere.
const PRINTABLE = /^[^\p{Cc}]+$/u;
/** JWK members of private or symmetric keys (RFC 7518 §6): a proof's key must be public (RFC 9449 §4.3, check 7). */
const SECRET_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
/** RFC 3986 §2.3 unreserved characters, which §6.2.2.2 says to decode before comparing. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
/** RFC 7518 §3.3: an RS256 key of at least 2048 bits. */
const MIN_RSA_BITS = 2048;

/** What the proof must match: the request it came with, and the access token it goes with on a resource request. */
export interface ExpectedProof {
  method: string;
  /** The request's URI as this service is reached (the issuer and the path), without query or fragment. */
  uri: string;
  /** The access token of `Authorization: DPoP`: the proof must carry its hash (`ath`). */
  accessToken?: string;
}

/** A proof that held: its key's RFC 7638 thumbprint, and what its replay record needs. */
export interface CheckedProof {
  jkt: string;
  jti: string;
  iat: number;
}

/** A proof header that held: its algorithm, and its key imported (a KeyObject: jose's Node build) and named by thumbprint. */
interface ProofSigner {
  alg: DpopSigningAlgorithm;
  key: KeyObject;
  jkt: string;
}

const refused = (message: string) => new DpopProofError(message);

/** Whether the key is one the algorithm is specified for here: P-256 for ES256, Ed25519 for EdDSA and Ed25519, RSA for RS256. */
function keyFits(alg: DpopSigningAlgorithm, jwk: Record<string, unknown>): boolean {
  if (alg === 'ES256') return jwk.kty === 'EC' && jwk.crv === 'P-256';
  if (alg === 'RS256') return jwk.kty === 'RSA';
  return jwk.kty === 'OKP' && jwk.crv === 'Ed25519';
}

/**
 * A URI as RFC 9449 §4.3 compares `htu`: without query and fragment, after syntax-based and
 * scheme-based normalisation (RFC 3986 §6.2.2, §6.2.3: case of scheme and host, default port, dot
 * segments, percent-encodings in upper case and unreserved characters decoded). Undefined when it
 * is not an absolute URI.
 */
export function comparableUri(uri: string): string | undefined {
  if (!URL.canParse(uri)) return undefined;
  const url = new URL(uri);
  url.search = '';
  url.hash = '';
  url.pathname = url.pathname.replace(/%[0-9A-Fa-f]{2}/g, (escape) => {
    const character = String.fromCharCode(parseInt(escape.slice(1), 16));
    return UNRESERVED.test(character) ? character : escape.toUpperCase();
  });
  return url.href;
}

/** RFC 9449 §4.2: `ath` is the base64url SHA-256 of the access token's ASCII. */
export const accessTokenHash = (accessToken: string) => createHash('sha256').update(accessToken, 'ascii').digest('base64url');

/**
 * Checks a DPoP proof (RFC 9449 §4.3) but for replay, which needs the database (ProofReplay): a
 * compact JWS typed `dpop+jwt`, signed with one of DPOP_SIGNING_ALGORITHMS by the public key in its
 * header, with `jti`, `htm` and `htu` of this request, an `iat` within PROOF_WINDOW_SECONDS of now,
 * and on a resource request the access token's hash. No server nonce is used.
 *
 * jose imports the header's key and computes its thumbprint, once per header, not per proof: a
 * client signs every proof with the same key, so its header is the same bytes each time, and it is
 * kept (bounded) once it held; importing it again cost as much as the verification
 * (docs/token-exchange-and-dpop.md, "What the proof check costs"). Each proof's signature is then
 * checked in place (proof-signature.ts), and its claims here.
 */
export class ProofChecker {
  private readonly signers = new ExpiringMap<string, ProofSigner>({ maxEntries: 1_000, ttlMs: 10 * 60_000 });

  async check(proof: string, expected: ExpectedProof, now: number): Promise<CheckedProof> {
    if (proof.length > MAX_PROOF_LENGTH || !COMPACT_JWS.test(proof)) throw refused('The DPoP proof is not a compact JWS');
    const headerEnd = proof.indexOf('.');
    const payloadEnd = proof.indexOf('.', headerEnd + 1);
    const header = proof.slice(0, headerEnd);
    const signer = this.signers.get(header) ?? (await this.signerOf(header));
    if (!proofSignatureHolds(signer.alg, signer.key, proof.slice(0, payloadEnd), proof.slice(payloadEnd + 1))) {
      throw refused('The DPoP proof\'s signature does not verify with its key');
    }
    const claims = decodeSegment(proof.slice(headerEnd + 1, payloadEnd));
    if (!claims) throw refused('The DPoP proof\'s claims must be a JSON object');
    return { jkt: signer.jkt, ...claimsHold(claims, expected, now) };
  }

  /** RFC 9449 §4.3 checks 4 to 7 on a header not seen lately: type, algorithm, a public key that fits it; then kept. */
  private async signerOf(encoded: string): Promise<ProofSigner> {
    const header = decodeSegment(encoded);
    if (!header || header.typ !== 'dpop+jwt') throw refused('The DPoP proof must be typed dpop+jwt');
    // RFC 7515 §4.1.11: an extension this service does not understand (crit, or b64 of RFC 7797) is refused.
    if (header.crit !== undefined || header.b64 !== undefined) throw refused('The DPoP proof carries a header extension this service does not take');
    const alg = DPOP_SIGNING_ALGORITHMS.find((known) => known === header.alg);
    if (!alg) throw refused(`The DPoP proof must be signed with ${DPOP_SIGNING_ALGORITHMS.join(', ')}`);
    const jwk = header.jwk;
    if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) throw refused('The DPoP proof must carry its public key as jwk');
    const members = jwk as Record<string, unknown>;
    if (SECRET_MEMBERS.some((member) => member in members)) throw refused('The DPoP proof\'s jwk must be a public key');
    if (!keyFits(alg, members)) throw refused(`The DPoP proof's key does not fit ${alg}`);
    let signer: ProofSigner;
    try {
      const key = (await importJWK(jwk as JWK, alg)) as KeyObject;
      signer = { alg, key, jkt: await calculateJwkThumbprint(jwk as JWK, 'sha256') };
    } catch {
      throw refused('The DPoP proof\'s jwk is not a usable public key');
    }
    if (signer.key.type !== 'public') throw refused('The DPoP proof\'s jwk must be a public key');
    if (alg === 'RS256' && (signer.key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) throw refused('An RS256 DPoP key needs at least 2048 bits');
    this.signers.set(encoded, signer);
    return signer;
  }
}

/** RFC 9449 §4.3 checks 3, 8, 9, 11 and 12.1: the claims, against the request (and exp and nbf, when present). */
function claimsHold(claims: Record<string, unknown>, expected: ExpectedProof, now: number): { jti: string; iat: number } {
  const { jti, htm, htu, iat, ath, exp, nbf } = claims;
  // RFC 7519 §4.1.4 and §4.1.5: a proof need not carry exp or nbf, but one that does is held to them.
  if (exp !== undefined && (typeof exp !== 'number' || exp <= now)) throw refused('The DPoP proof has expired (exp)');
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now)) throw refused('The DPoP proof is not valid yet (nbf)');
  if (typeof jti !== 'string' || jti.length > MAX_JTI_LENGTH || !PRINTABLE.test(jti)) throw refused('The DPoP proof needs a jti of 1 to 256 characters');
  if (htm !== expected.method) throw refused('The DPoP proof is for another HTTP method (htm)');
  // The exact URI clients are told needs no parsing; anything else is compared normalised.
  if (typeof htu !== 'string' || (htu !== expected.uri && (comparableUri(htu) === undefined || comparableUri(htu) !== comparableUri(expected.uri)))) {
    throw refused('The DPoP proof is for another URI (htu)');
  }
  if (typeof iat !== 'number' || !Number.isFinite(iat) || Math.abs(now - iat) > PROOF_WINDOW_SECONDS) {
    throw refused(`The DPoP proof's iat must be within ${PROOF_WINDOW_SECONDS} seconds of now`);
  }
  if (expected.accessToken !== undefined && ath !== accessTokenHash(expected.accessToken)) {
    throw refused('The DPoP proof does not carry the access token\'s hash (ath)');
  }
  return { jti, iat };
}
