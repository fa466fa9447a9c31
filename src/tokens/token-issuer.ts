import { randomUUID } from 'node:crypto';
import { nowSeconds, type TokenSigner } from '../signing-keys/token-signer';
import type { NewSession } from '../sessions/opening';
import type { SessionTimes } from '../sessions/statement-parts';
import type { RequestOrigin } from '../shared/audit-context';
import { heldScope, type PrincipalType, type Role } from '../shared/principals';
import type { OAuthTokenResponse } from './tokens.responses';
import { UNCOUNTED, type KeyUsageCounts } from '../usage/usage-counter';

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
  /** An API key's permissions (its policy), which its tokens' scope may carry after the role's. */
  permissions?: readonly string[];
  /** An API key's expiry (Unix seconds): no token outlives it. Null or absent: none. */
  notAfter?: number | null;
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
  /** The scope asked for or kept by the session; undefined: all the role and a key's permissions grant. */
  scope?: string;
  /** The client the tokens are for: the access token's `client_id`, the ID token's `aud` and `azp`. */
  clientId: string;
  refreshToken: boolean;
  idToken: boolean;
  /**
   * The RFC 7638 thumbprint of the key a DPoP proof was made with: the access and refresh tokens are
   * bound to it (`cnf.jkt`, RFC 9449 §6) and the response says `token_type` DPoP. Undefined: bearer.
   */
  dpopJkt?: string;
}

/** An access token a token exchange issues (RFC 8693): in its subject's session, never past the subject token. */
export interface ExchangedToken {
  sessionId: string;
  /** The moment the token is stamped with; the caller checked that `notAfter` is at least a second later. */
  now: number;
  /** The subject token's `exp`: the new token's is never later. */
  notAfter: number;
  scope: string;
  clientId: string;
  /** Whom the token is for: AUDIENCE or a value of EXCHANGE_AUDIENCES. */
  audience: string;
  /** RFC 8693 §4.1: who acts on the subject's behalf, and before it who acted on the actor's. */
  act?: Record<string, unknown>;
  dpopJkt?: string;
}

/** RFC 8693 §3: the type of the token an exchange issues. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** What every grant ends with: the token response for a session just opened or rotated. */
export class TokenIssuer {
  constructor(
    private readonly signer: TokenSigner,
    private readonly lifetimes: SessionLifetimes,
    /** Counts every token issued to an API key (usage), in memory. */
    private readonly usage: KeyUsageCounts = UNCOUNTED,
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
   * the session keeps) within what the subject's role and, for an API key, its permissions grant now.
   * Offline resource servers read the claim, so it must never say more than the role allows at the
   * moment of issue. And no token outlives its API key (the session's times already do not).
   */
  async issue(subject: TokenSubject, session: IssuedSession, what: IssueOptions): Promise<OAuthTokenResponse> {
    const { id: sessionId, refreshJti, times, now } = session;
    const notAfter = subject.notAfter ?? Infinity;
    const expiresAt = Math.min(now + this.lifetimes.accessTokenTtl, notAfter);
    const accessTokenTtl = expiresAt - now;
    const scope = heldScope(subject.role, what.scope ?? null, undefined, subject.permissions);
    const identity = { sub: subject.id, sid: sessionId, preferred_username: subject.name, principal_type: subject.type };
    const bound = confirmation(what.dpopJkt);
    if (subject.type === 'api_key') this.usage.token(subject.id);
    const [accessToken, refreshToken, idToken] = await Promise.all([
      this.signer.sign(
        'Bearer',
        { ...identity, scope, roles: subject.role ? [subject.role] : [], client_id: what.clientId, ...bound },
        expiresAt,
        now,
      ),
      what.refreshToken ? this.signer.sign('Refresh', { sub: subject.id, sid: sessionId, jti: refreshJti, ...bound }, times.refresh_expires_at, now) : undefined,
      what.idToken
        ? this.signer.sign('ID', { ...identity, aud: what.clientId, azp: what.clientId, auth_time: times.created_at }, expiresAt, now)
        : undefined,
    ]);
    return {
      access_token: accessToken,
      expires_in: accessTokenTtl,
      ...(refreshToken !== undefined && { refresh_expires_in: Math.max(0, times.refresh_expires_at - now), refresh_token: refreshToken }),
      token_type: what.dpopJkt === undefined ? 'bearer' : 'DPoP',
      ...(idToken !== undefined && { id_token: idToken }),
      'not-before-policy': 0,
      'session-state': sessionId,
      scope,
    };
  }

  /**
   * The token response of a token exchange (RFC 8693 §2.2.1): an access token for `subject` in the
   * subject token's session, for its audience, living ACCESS_TOKEN_TTL but never past the subject
   * token; no refresh token.
   */
  async issueExchanged(subject: TokenSubject, token: ExchangedToken): Promise<OAuthTokenResponse> {
    const { now } = token;
    if (subject.type === 'api_key') this.usage.token(subject.id);
    const exp = Math.min(now + this.lifetimes.accessTokenTtl, token.notAfter);
    // The one rule of issue(): never more than the subject's role grants now.
    const scope = heldScope(subject.role, token.scope, undefined, subject.permissions);
    const claims = {
      sub: subject.id,
      sid: token.sessionId,
      aud: token.audience,
      preferred_username: subject.name,
      principal_type: subject.type,
      scope,
      roles: subject.role ? [subject.role] : [],
      client_id: token.clientId,
      ...(token.act && { act: token.act }),
      ...confirmation(token.dpopJkt),
    };
    return {
      access_token: await this.signer.sign('Bearer', claims, exp, now),
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: token.dpopJkt === undefined ? 'bearer' : 'DPoP',
      expires_in: exp - now,
      'not-before-policy': 0,
      'session-state': token.sessionId,
      scope,
    };
  }
}

/** RFC 7800 §3.1 with RFC 9449 §6.1: the `cnf` claim naming the DPoP key's thumbprint, or nothing for a bearer token. */
const confirmation = (jkt: string | undefined) => (jkt === undefined ? {} : { cnf: { jkt } });
