import { randomUUID } from 'node:crypto';
import { nowSeconds, type TokenSigner } from '../signing-keys/token-signer';
import type { NewSession } from '../sessions/opening';
import type { SessionTimes } from '../sessions/statement-parts';
import type { RequestOrigin } from '../shared/audit-context';
import { heldScope, type PrincipalType, type Role } from '../shared/principals';
import type { OAuthTokenResponse } from './tokens.responses';

/** How long what a login issues lives, in seconds. */
export interface SessionLifetimes {
  accessTokenTtl: number;
  refreshTokenTtl: number;
  /** A session's absolute end: no refresh token outlives it. */
  sessionMaxTtl: number;
}

/** Whom the tokens are for. */
export interface TokenSubject {
  type: PrincipalType;
  id: string;
  name: string;
  /** The role as the database holds it now: read by the statement that opened or rotated the session. */
  role: Role | null;
}

/** The session's side of an issue: which session, its new refresh token's id, and its times as stored. */
export interface IssuedSession {
  id: string;
  refreshJti: string;
  times: SessionTimes;
  /** The moment the tokens are stamped with, the one the stored times were computed from. */
  now: number;
}

/** What a grant issues beside the access token, and for whom. */
export interface IssueOptions {
  /** The scope asked for or kept by the session; undefined: all the role grants. */
  scope?: string;
  /** The client the tokens are for: the access token's `client_id`, the ID token's `aud` and `azp`. */
  clientId: string;
  refreshToken: boolean;
  idToken: boolean;
}

/** What every grant ends with: the token response for a session just opened or rotated. */
export class TokenIssuer {
  constructor(
    private readonly signer: TokenSigner,
    private readonly lifetimes: SessionLifetimes,
  ) {}

  /** A session about to be opened: fresh ids, the configured lifetimes, and the moment its tokens are stamped with. */
  newSession(origin: RequestOrigin): NewSession {
    return {
      now: nowSeconds(),
      id: randomUUID(),
      refreshJti: randomUUID(),
      refreshTtlSeconds: this.lifetimes.refreshTokenTtl,
      maxTtlSeconds: this.lifetimes.sessionMaxTtl,
      origin,
    };
  }

  /** A refresh rotation's new refresh token id and lifetime, stamped now. */
  nextRefresh(): { now: number; newJti: string; refreshTtlSeconds: number } {
    return { now: nowSeconds(), newJti: randomUUID(), refreshTtlSeconds: this.lifetimes.refreshTokenTtl };
  }

  /**
   * The token response for `subject` in `session`: an access token (for AUDIENCE, naming the client),
   * a refresh token unless `refreshToken` is false (client credentials, RFC 6749 §4.4.3), and an ID
   * token for the client when `idToken` is true.
   *
   * The scope a token claims is the one rule every grant goes through: what was asked for (or what
   * the session keeps) within what the subject's role grants now. Offline resource servers read the
   * claim, so it must never say more than the role allows at the moment of issue.
   */
  async issue(subject: TokenSubject, session: IssuedSession, what: IssueOptions): Promise<OAuthTokenResponse> {
    const { accessTokenTtl } = this.lifetimes;
    const { id: sessionId, refreshJti, times, now } = session;
    const scope = heldScope(subject.role, what.scope ?? null);
    const identity = { sub: subject.id, sid: sessionId, preferred_username: subject.name, principal_type: subject.type };
    const [accessToken, refreshToken, idToken] = await Promise.all([
      this.signer.sign(
        'Bearer',
        { ...identity, scope, roles: subject.role ? [subject.role] : [], client_id: what.clientId },
        now + accessTokenTtl,
        now,
      ),
      what.refreshToken ? this.signer.sign('Refresh', { sub: subject.id, sid: sessionId, jti: refreshJti }, times.refresh_expires_at, now) : undefined,
      what.idToken
        ? this.signer.sign('ID', { ...identity, aud: what.clientId, azp: what.clientId, auth_time: times.created_at }, now + accessTokenTtl, now)
        : undefined,
    ]);
    return {
      access_token: accessToken,
      expires_in: accessTokenTtl,
      ...(refreshToken !== undefined && { refresh_expires_in: Math.max(0, times.refresh_expires_at - now), refresh_token: refreshToken }),
      token_type: 'bearer',
      ...(idToken !== undefined && { id_token: idToken }),
      'not-before-policy': 0,
      'session-state': sessionId,
      scope,
    };
  }
}
