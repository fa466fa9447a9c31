import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database';
import { LoginRefusedError, UnauthorizedError } from '../shared/errors';
import type { ApiKeysService } from '../api-keys/api-keys.service';
import type { KeyAppkeys } from '../api-keys/appkey-cache';
import { INVALID_CREDENTIALS, type UsersService } from '../users/users.service';
import { Coalescer } from '../db/coalescer';
import {
  openApiKeySessions,
  openUserSession,
  revokeSessionOnReuse,
  rotateRefreshToken,
  rotateRefreshTokens,
  type ApiKeyLogin,
  type ApiKeySessionOutcome,
  type NewSession,
  type RefreshRotation,
  type RotatedRefresh,
  type SessionTimes,
} from '../sessions/sessions.repository';
import type { RequestOrigin } from '../shared/audit-context';
import { recordAuditEvent } from '../audit-trail/audit-trail';
import { nowSeconds, type TokenSigner } from '../signing-keys/token-signer';
import { claimedAppname, verifyRequestToken, type VerifiedRequestToken } from './request-token';
import { scopeFor, type PrincipalType, type Role } from '../shared/principals';

/** Exactly the spec's token response object. */
export interface TokenResponse {
  access_token: string;
  expires_in: number;
  refresh_expires_in: number;
  refresh_token: string;
  token_type: 'bearer';
  id_token: string;
  'not-before-policy': 0;
  'session-state': string;
  scope: string;
}

export interface TokenLifetimes {
  accessTokenTtl: number;
  refreshTokenTtl: number;
  sessionMaxTtl: number;
  issuer: string;
  clockTolerance: number;
}

/** Hooks for what the grants detect, e.g. for metrics; the service knows nothing of who listens. */
export interface TokenEvents {
  /** A refresh token was presented again after use; its session has just been revoked. */
  onRefreshReuse?: () => void;
}

interface SessionPrincipal {
  type: PrincipalType;
  id: string;
  name: string;
  role: Role | null;
}

/** The three grants: request token (API key), password (user), refresh token. */
export class TokenService {
  /** Concurrent API-key logins share one statement and one commit: the commit is most of their cost. */
  private readonly apiKeyLogins: Coalescer<ApiKeyLogin, ApiKeySessionOutcome>;
  /** Likewise concurrent refreshes; what a batch does not rotate is tried alone (rotateRefreshTokens). */
  private readonly refreshes: Coalescer<RefreshRotation, RotatedRefresh | undefined>;

  constructor(
    private readonly db: Database,
    private readonly signer: TokenSigner,
    private readonly apiKeys: ApiKeysService,
    private readonly users: UsersService,
    private readonly settings: TokenLifetimes,
    private readonly events: TokenEvents = {},
  ) {
    this.apiKeyLogins = new Coalescer((logins) => openApiKeySessions(db, logins), { maxInFlight: 1, maxBatch: 128 });
    this.refreshes = new Coalescer((rotations) => rotateRefreshTokens(db, rotations), { maxInFlight: 1, maxBatch: 128 });
  }

  async exchangeRequestToken(requestToken: string, origin: RequestOrigin): Promise<TokenResponse> {
    let appname: string | null = null;
    try {
      appname = claimedAppname(requestToken);
      return await this.openApiKeySession(appname, requestToken, origin);
    } catch (err) {
      if (err instanceof LoginRefusedError) await this.recordFailedLogin(err, origin, { appname });
      throw err;
    }
  }

  async passwordGrant(username: string, password: string, origin: RequestOrigin): Promise<TokenResponse> {
    try {
      let issued = await this.openPasswordSession(username, password, origin);
      if (!issued) {
        // The user changed between the check and the write (new password, disabled or deleted, here or
        // on another instance): what was read is dropped, and the credentials judged afresh, once.
        this.users.forget(username);
        issued = await this.openPasswordSession(username, password, origin);
      }
      if (!issued) throw new LoginRefusedError(INVALID_CREDENTIALS, 'user_changed');
      return issued;
    } catch (err) {
      // No username is longer than 64 characters; a longer one is cut so a caller cannot grow the trail
      // at will. NUL, which text cannot hold, is recorded as U+FFFD.
      if (err instanceof LoginRefusedError) {
        await this.recordFailedLogin(err, origin, { username: username.slice(0, 64).replaceAll('\u0000', '\uFFFD') });
      }
      throw err;
    }
  }

  /** Undefined when the user no longer holds the password hash the credentials were checked against. */
  private async openPasswordSession(username: string, password: string, origin: RequestOrigin): Promise<TokenResponse | undefined> {
    const user = await this.users.verifyCredentials(username, password);
    const session = this.newSession(origin);
    const opened = await openUserSession(this.db, { ...session, userId: user.id, username: user.username, passwordHash: user.password_hash });
    if (!opened) return undefined;
    const principal = { type: 'user', id: user.id, name: user.username, role: opened.role } as const;
    return this.issue(principal, session.id, session.refreshJti, opened, session.now);
  }

  /**
   * Consumes the refresh token and issues a new pair in the same session. A token that verifies but
   * is no longer the session's current one has been used before: the session is revoked.
   */
  async refreshGrant(refreshToken: string, origin: RequestOrigin): Promise<TokenResponse> {
    const claims = await this.signer.verify(refreshToken, 'Refresh');
    const now = nowSeconds();
    const rotation: RefreshRotation = {
      now,
      sessionId: claims.sid,
      principalId: claims.sub,
      presentedJti: claims.jti,
      newJti: randomUUID(),
      refreshTtlSeconds: this.settings.refreshTokenTtl,
      origin,
    };
    const rotated = (await this.refreshes.submit(rotation)) ?? (await rotateRefreshToken(this.db, rotation));
    if (!rotated) {
      if (await revokeSessionOnReuse(this.db, claims.sid, claims.jti, origin)) {
        this.events.onRefreshReuse?.();
        throw new UnauthorizedError('Refresh token was already used; the session has been revoked');
      }
      throw new UnauthorizedError('Invalid or expired refresh token');
    }
    const { principal, times } = rotated;
    return this.issue(
      { type: principal.type, id: principal.principal_id, name: principal.name, role: principal.role },
      claims.sid,
      rotation.newJti,
      times,
      now,
    );
  }

  /**
   * Cached appkeys first (no round trip, no AES-GCM open). If they did not sign the token, or the
   * write finds the key changed since, the appkeys are read afresh and the exchange tried once more.
   */
  private async openApiKeySession(appname: string, requestToken: string, origin: RequestOrigin): Promise<TokenResponse> {
    const cached = this.apiKeys.cachedValidAppkeys(appname);
    const verifiedByCached = cached && verifyRequestToken(requestToken, appkeysOf(cached), this.settings);
    if (verifiedByCached) {
      const issued = await this.openWith(cached, verifiedByCached, origin);
      if (issued) return issued;
    }
    const found = await this.apiKeys.findWithValidAppkeys(appname);
    // Bad signature and unknown appname read the same, so appnames cannot be probed.
    if (!found) throw new LoginRefusedError('Invalid request token', 'unknown_api_key');
    const verified = verifyRequestToken(requestToken, appkeysOf(found), this.settings);
    if (!verified) throw new LoginRefusedError('Invalid request token', 'invalid_request_token');
    const issued = await this.openWith(found, verified, origin);
    // Read a moment ago, yet already changed: deleted or regenerated meanwhile.
    if (!issued) throw new LoginRefusedError('Invalid request token', 'invalid_request_token');
    return issued;
  }

  /** Opens the session of a verified request token; undefined when the key turned out changed and nothing was written. */
  private async openWith(key: KeyAppkeys, { claims, signedWith }: VerifiedRequestToken, origin: RequestOrigin): Promise<TokenResponse | undefined> {
    const session = this.newSession(origin);
    const outcome = await this.apiKeyLogins.submit({
      ...session,
      apiKeyId: key.id,
      keyGeneration: key.appkeys[signedWith]!.generation,
      jti: claims.jti,
      // Replays are refused for as long as the token could still be accepted.
      jtiExpiresAt: claims.exp + this.settings.clockTolerance,
    });
    if (!outcome.opened) {
      if (outcome.refused === 'stale') return undefined;
      throw new LoginRefusedError('Request token has already been used', 'replayed_request_token');
    }
    const principal = { type: 'api_key', id: key.id, name: key.appname, role: outcome.role } as const;
    return this.issue(principal, session.id, session.refreshJti, outcome.times, session.now);
  }

  /** A refused login leaves a trace even though nothing changed; its reason is for operators only. */
  private async recordFailedLogin(
    err: LoginRefusedError,
    origin: RequestOrigin,
    who: { appname?: string | null; username?: string },
  ): Promise<void> {
    await recordAuditEvent(
      this.db,
      { ...origin, actor: 'anonymous' },
      { type: 'login.failed', ...who, details: { route: origin.route, reason: err.reason } },
    );
  }

  /** A session about to be opened: fresh ids, the configured lifetimes, and the moment its tokens are stamped with. */
  private newSession(origin: RequestOrigin): NewSession {
    return {
      now: nowSeconds(),
      id: randomUUID(),
      refreshJti: randomUUID(),
      refreshTtlSeconds: this.settings.refreshTokenTtl,
      maxTtlSeconds: this.settings.sessionMaxTtl,
      origin,
    };
  }

  private async issue(
    principal: SessionPrincipal,
    sessionId: string,
    refreshJti: string,
    times: SessionTimes,
    now: number,
  ): Promise<TokenResponse> {
    const scope = scopeFor(principal.role);
    const identity = { sub: principal.id, sid: sessionId, preferred_username: principal.name, principal_type: principal.type };
    const [accessToken, refreshToken, idToken] = await Promise.all([
      this.signer.sign('Bearer', { ...identity, scope, roles: principal.role ? [principal.role] : [] }, now + this.settings.accessTokenTtl, now),
      this.signer.sign('Refresh', { sub: principal.id, sid: sessionId, jti: refreshJti }, times.refresh_expires_at, now),
      this.signer.sign('ID', { ...identity, auth_time: times.created_at }, now + this.settings.accessTokenTtl, now),
    ]);
    return {
      access_token: accessToken,
      expires_in: this.settings.accessTokenTtl,
      refresh_expires_in: Math.max(0, times.refresh_expires_at - now),
      refresh_token: refreshToken,
      token_type: 'bearer',
      id_token: idToken,
      'not-before-policy': 0,
      'session-state': sessionId,
      scope,
    };
  }
}

const appkeysOf = (key: KeyAppkeys) => key.appkeys.map((k) => k.appkey);
