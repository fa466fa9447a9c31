import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { UnauthorizedError } from '../errors';
import type { SigningKeysService } from './signing-keys.service';

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
  audience: string;
  clockTolerance: number;
}

const ALGORITHM = 'ES256';

export const nowSeconds = () => Math.floor(Date.now() / 1000);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

/** Signs and verifies the tokens this service issues (ES256 only, with a kid). */
export class TokenSigner {
  constructor(
    private readonly keys: SigningKeysService,
    private readonly settings: TokenSettings,
  ) {}

  async sign(
    kind: TokenKind,
    claims: { sub: string; sid: string; jti?: string; [claim: string]: unknown },
    expiresAt: number,
    issuedAt = nowSeconds(),
  ): Promise<string> {
    const { kid, privateKey } = await this.keys.signingKey();
    const payload: IssuedClaims = {
      ...claims,
      iss: this.settings.issuer,
      aud: this.settings.audience,
      iat: issuedAt,
      exp: expiresAt,
      jti: claims.jti ?? randomUUID(),
      typ: kind,
    };
    return jwt.sign(payload, privateKey, { algorithm: ALGORITHM, keyid: kid });
  }

  /**
   * Verifies signature (ES256 only, key by kid), iss, aud, exp (with leeway) and that the token is of
   * the expected kind. Every failure is the same 401 to the caller.
   */
  async verify(token: string, kind: TokenKind): Promise<IssuedClaims> {
    // Built only on failure: capturing a stack on every valid token shows up in profiles.
    const refused = () => new UnauthorizedError(`Invalid or expired ${kind === 'Refresh' ? 'refresh' : 'access'} token`);
    const decoded = jwt.decode(token, { complete: true });
    if (!decoded || typeof decoded.payload === 'string' || decoded.header.alg !== ALGORITHM || !decoded.header.kid) {
      throw refused();
    }
    const key = await this.keys.publicKey(decoded.header.kid);
    if (!key) throw refused();
    let claims: jwt.JwtPayload;
    try {
      claims = jwt.verify(token, key, {
        algorithms: [ALGORITHM],
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        clockTolerance: this.settings.clockTolerance,
      }) as jwt.JwtPayload;
    } catch {
      throw refused();
    }
    // We issue sub, sid and jti as UUIDs; anything else is not ours, and must not reach a uuid column.
    if (claims.typ !== kind || typeof claims.exp !== 'number' || ![claims.sub, claims.sid, claims.jti].every(isUuid)) {
      throw refused();
    }
    return claims as IssuedClaims;
  }
}
