import { createHmac, createSecretKey, hkdfSync, randomUUID, timingSafeEqual, type KeyObject } from 'node:crypto';
import { UnauthorizedError } from '../shared/errors';
import { ES256_SIGNATURE_BYTES, es256Holds, es256Sign } from '../crypto/es256';
import { decodeSegment, encodeSegment } from '../crypto/jws-segments';
import type { SigningKeysService } from './signing-keys.service';
import { VerifiedTokens } from './verified-tokens';

/** The `typ` claim tells our three kinds of token apart, so none can stand in for another. */
export type TokenKind = 'Bearer' | 'Refresh' | 'ID';

export interface IssuedClaims {
  iss: string;
  sub: string;
  aud: string;
  iat: number;
  exp: number;
  jti: string;
  sid: string;
  typ: TokenKind;
  [claim: string]: unknown;
}

export interface TokenSettings {
  issuer: string;
  /** The `aud` of access tokens for this service's own routes (AUDIENCE). */
  audience: string;
  /** The other audiences a token exchange may issue access tokens for (EXCHANGE_AUDIENCES). */
  exchangeAudiences?: readonly string[];
  clockTolerance: number;
}

/**
 * Which audiences a verification accepts: this service's own (its routes), or any this service
 * issues tokens for (introspection, revocation, and the subject of a token exchange, which describe,
 * end or exchange a token wherever it is meant to be used).
 */
export type AudienceScope = 'this-service' | 'any-issued';

const ALGORITHM = 'ES256';
const REFRESH_ALGORITHM = 'HS256';

export const nowSeconds = () => Math.floor(Date.now() / 1000);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

const HS256_SIGNATURE_BYTES = 32;

/** The refresh-token key: derived from the master key (so every instance has it), and used for nothing else. */
export const refreshTokenKey = (masterKey: Buffer): KeyObject =>
  createSecretKey(Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'refresh-token-hmac-v1', 32)));

/**
 * Signs and verifies the tokens this service issues. Access and ID tokens: ES256 with a kid, so other
 * services can verify them against the JWK Set. Refresh tokens only ever come back to this service:
 * HS256 under a key derived from the master key, as Keycloak does, which costs a fraction of an ES256
 * signature or verification (docs/performance.md, "refresh"). A token of one kind never verifies as
 * another: the kind fixes the one algorithm accepted, and the typ claim must match.
 *
 * Done with node:crypto directly rather than jsonwebtoken, which costs more per ES256 signature as it
 * re-parses options and the key on every call (docs/performance.md, "request overhead"). The checks
 * are the same: one algorithm, key by kid, signature, iss, aud, exp and nbf with the leeway, then our
 * own typ and id claims.
 */
export class TokenSigner {
  /** The encoded JOSE header per type and kid: it only changes when the signing key does. */
  private readonly headers = new Map<string, string>();
  private readonly refreshHeader = encodeSegment({ alg: REFRESH_ALGORITHM, typ: 'JWT' });
  private readonly verified = new VerifiedTokens();

  constructor(
    private readonly keys: SigningKeysService,
    /**
     * See refreshTokenKey(). The first signs; any verifies: during a MASTER_KEY rotation the second
     * is the previous key's, so refresh tokens issued before the rotation keep working until
     * MASTER_KEY_PREVIOUS is removed.
     */
    private readonly refreshKeys: readonly [KeyObject, ...KeyObject[]],
    private readonly settings: TokenSettings,
  ) {}

  async sign(
    kind: TokenKind,
    claims: { sub: string; sid: string; jti?: string; [claim: string]: unknown },
    expiresAt: number,
    issuedAt = nowSeconds(),
  ): Promise<string> {
    const payload: IssuedClaims = {
      ...claims,
      iss: this.settings.issuer,
      // An ID token names its client as its audience; access and refresh tokens, the resource servers'.
      aud: typeof claims.aud === 'string' ? claims.aud : this.settings.audience,
      iat: issuedAt,
      exp: expiresAt,
      jti: claims.jti ?? randomUUID(),
      typ: kind,
    };
    if (kind === 'Refresh') {
      const signingInput = `${this.refreshHeader}.${encodeSegment(payload)}`;
      return `${signingInput}.${this.refreshSignature(signingInput, this.refreshKeys[0]).toString('base64url')}`;
    }
    const { kid, privateKey } = await this.keys.signingKey();
    const signingInput = `${this.headerFor(kind, kid)}.${encodeSegment(payload)}`;
    const signature = es256Sign(privateKey, signingInput);
    return `${signingInput}.${signature.toString('base64url')}`;
  }

  /**
   * Verifies signature (the kind's one algorithm), iss, aud, exp and nbf (with leeway) and that the
   * token is of the expected kind. Every failure is the same 401 to the caller.
   */
  async verify(token: string, kind: TokenKind, audiences: AudienceScope = 'this-service'): Promise<IssuedClaims> {
    // Built only on failure: capturing a stack on every valid token shows up in profiles.
    const refused = () => new UnauthorizedError(`Invalid or expired ${kind === 'Refresh' ? 'refresh' : 'access'} token`);
    const parts = token.split('.');
    if (parts.length !== 3) throw refused();
    const [encodedHeader, encodedPayload, encodedSignature] = parts as [string, string, string];

    // A signature that held lately is not checked again; the key must still be published.
    const cacheKey = kind === 'Refresh' ? undefined : this.verified.keyFor(token, kind);
    const keptKid = cacheKey === undefined ? undefined : this.verified.signedBy(cacheKey);
    if (keptKid !== undefined && (await this.keys.publicKey(keptKid)) === undefined) {
      this.verified.forget(cacheKey!);
      throw refused();
    }
    let verifiedKid: string | undefined;
    if (keptKid === undefined) {
      const header = decodeSegment(encodedHeader);
      if (!header || header.crit !== undefined) throw refused();
      const signed = await this.signatureHolds(kind, header, `${encodedHeader}.${encodedPayload}`, Buffer.from(encodedSignature, 'base64url'));
      if (!signed) throw refused();
      if (cacheKey !== undefined) verifiedKid = header.kid as string;
    }

    const claims = decodeSegment(encodedPayload);
    if (!claims || !this.claimsHold(claims, kind, audiences)) {
      if (keptKid !== undefined) this.verified.forget(cacheKey!);
      throw refused();
    }
    if (verifiedKid !== undefined) this.verified.keep(cacheKey!, verifiedKid);
    return claims as IssuedClaims;
  }

  private claimsHold(claims: Record<string, unknown>, kind: TokenKind, audiences: AudienceScope): boolean {
    const { issuer, audience, exchangeAudiences = [], clockTolerance } = this.settings;
    const now = nowSeconds();
    const { iss, aud, exp, nbf, typ } = claims;
    const accepted = (value: unknown) => value === audience || (audiences === 'any-issued' && exchangeAudiences.includes(value as string));
    const audienceHolds = accepted(aud) || (Array.isArray(aud) && aud.some(accepted));
    const notExpired = typeof exp === 'number' && now < exp + clockTolerance;
    const started = nbf === undefined || (typeof nbf === 'number' && nbf <= now + clockTolerance);
    // We issue sub, sid and jti as UUIDs; anything else is not ours, and must not reach a uuid column.
    return iss === issuer && audienceHolds && notExpired && started && typ === kind && [claims.sub, claims.sid, claims.jti].every(isUuid);
  }

  private refreshSignature(signingInput: string, key: KeyObject): Buffer {
    return createHmac('sha256', key).update(signingInput).digest();
  }

  /** Only the one algorithm the kind is issued with counts: HS256 for refresh tokens, ES256 with a known kid otherwise. */
  private async signatureHolds(kind: TokenKind, header: Record<string, unknown>, signingInput: string, signature: Buffer): Promise<boolean> {
    if (kind === 'Refresh') {
      return (
        header.alg === REFRESH_ALGORITHM &&
        signature.length === HS256_SIGNATURE_BYTES &&
        this.refreshKeys.some((key) => timingSafeEqual(signature, this.refreshSignature(signingInput, key)))
      );
    }
    if (header.alg !== ALGORITHM || typeof header.kid !== 'string' || signature.length !== ES256_SIGNATURE_BYTES) return false;
    const key = await this.keys.publicKey(header.kid);
    return key !== undefined && es256Holds(key, signingInput, signature);
  }

  /** Access tokens are typed `at+jwt` (RFC 9068 §2.1), so an RFC 9068 resource server accepts them and nothing takes another JWT for one. */
  private headerFor(kind: TokenKind, kid: string): string {
    const typ = kind === 'Bearer' ? 'at+jwt' : 'JWT';
    let header = this.headers.get(`${typ} ${kid}`);
    if (!header) {
      header = encodeSegment({ alg: ALGORITHM, typ, kid });
      this.headers.set(`${typ} ${kid}`, header);
    }
    return header;
  }
}
