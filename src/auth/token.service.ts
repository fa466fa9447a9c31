import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database';
import { UnauthorizedError } from '../errors';
import type { ApiKeysService } from '../api-keys/api-keys.service';
import type { UsersService } from '../users/users.service';
import {
  insertSession,
  openApiKeySession,
  revokeSessionOnReuse,
  rotateRefreshToken,
  type SessionTimes,
} from '../sessions/sessions.repository';
import { nowSeconds, type TokenSigner } from './jwt';
import { claimedAppname, verifyRequestToken } from './request-token';
import { scopeFor, type PrincipalType, type Role } from './roles';

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
  constructor(
    private readonly db: Database,
    private readonly signer: TokenSigner,
    private readonly apiKeys: ApiKeysService,
    private readonly users: UsersService,
    private readonly settings: TokenLifetimes,
    private readonly events: TokenEvents = {},
  ) {}

  async exchangeRequestToken(requestToken: string, clientIp: string | null): Promise<TokenResponse> {
    const appname = claimedAppname(requestToken);
    const found = await this.apiKeys.findWithAppkey(appname);
    if (!found) throw new UnauthorizedError('Invalid request token');
    const claims = verifyRequestToken(requestToken, found.appkey, this.settings);
    const { key } = found;

    const now = nowSeconds();
    const sessionId = randomUUID();
    const refreshJti = randomUUID();
    const times = await openApiKeySession(this.db, {
      now,
      id: sessionId,
      apiKeyId: key.id,
      ...this.sessionLifetimes(refreshJti),
      jti: claims.jti,
      // Replays are refused for as long as the token could still be accepted.
      jtiExpiresAt: claims.exp + this.settings.clockTolerance,
      clientIp,
    });
    if (!times) throw new UnauthorizedError('Request token has already been used');
    return this.issue({ type: 'api_key', id: key.id, name: key.appname, role: key.role }, sessionId, refreshJti, times, now);
  }

  async passwordGrant(username: string, password: string): Promise<TokenResponse> {
    const user = await this.users.verifyCredentials(username, password);
    const now = nowSeconds();
    const sessionId = randomUUID();
    const refreshJti = randomUUID();
    const times = await insertSession(this.db, { now, id: sessionId, userId: user.id, ...this.sessionLifetimes(refreshJti) });
    return this.issue({ type: 'user', id: user.id, name: user.username, role: user.role }, sessionId, refreshJti, times, now);
  }

  /**
   * Consumes the refresh token and issues a new pair in the same session. A token that verifies but
   * is no longer the session's current one has been used before: the session is revoked.
   */
  async refreshGrant(refreshToken: string): Promise<TokenResponse> {
    const claims = await this.signer.verify(refreshToken, 'Refresh');
    const now = nowSeconds();
    const newJti = randomUUID();
    const rotated = await rotateRefreshToken(this.db, {
      now,
      sessionId: claims.sid,
      principalId: claims.sub,
      presentedJti: claims.jti,
      newJti,
      refreshTtlSeconds: this.settings.refreshTokenTtl,
    });
    if (!rotated) {
      if (await revokeSessionOnReuse(this.db, claims.sid, claims.jti)) {
        this.events.onRefreshReuse?.();
        throw new UnauthorizedError('Refresh token was already used; the session has been revoked');
      }
      throw new UnauthorizedError('Invalid or expired refresh token');
    }
    const { principal, times } = rotated;
    return this.issue(
      { type: principal.type, id: principal.principal_id, name: principal.name, role: principal.role },
      claims.sid,
      newJti,
      times,
      now,
    );
  }

  private sessionLifetimes(refreshJti: string) {
    return { refreshJti, refreshTtlSeconds: this.settings.refreshTokenTtl, maxTtlSeconds: this.settings.sessionMaxTtl };
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
