import type { Database } from '../../db/database';
import { findSessionGrant } from '../../sessions/liveness';
import type { RefreshRotations } from '../../sessions/refresh-rotations';
import { revokeSessionOnReuse } from '../../sessions/revocation';
import type { TokenSigner } from '../../signing-keys/token-signer';
import { boundKeyOf } from '../../dpop/dpop';
import { DpopProofError, OAuthError, UnauthorizedError } from '../../shared/errors';
import type { RequestOrigin } from '../../shared/audit-context';
import { heldScope, scopeWithin, scopeWords } from '../../shared/principals';
import { sessionClientId } from '../session-client';
import { clientAddressText } from '../../key-policies/addresses';
import type { TokenIssuer } from '../token-issuer';
import type { OAuthTokenResponse } from '../tokens.responses';

/** Hooks for what the grants detect, e.g. for metrics; the grants know nothing of who listens. */
export interface TokenEvents {
  /** A refresh token was presented again after use; its session has just been revoked. */
  onRefreshReuse?: () => void;
}

/** What a refresh on the token endpoint asks for beyond the refresh token. */
export interface RefreshTokenRequest {
  /** Within the session's scope; it narrows the session's scope from now on. */
  scope?: string;
  /** The client the request names: it must be the one the refresh token was issued to. */
  clientId?: string;
}

/**
 * Consumes a refresh token and issues a new pair in the same session: POST /api/auth/bearer/refresh
 * and the token endpoint's refresh_token grant, one family whichever redeems it. A token that
 * verifies but is no longer the session's current one has been used before: the session is revoked.
 */
export class RefreshGrant {
  constructor(
    private readonly db: Database,
    private readonly signer: TokenSigner,
    private readonly issuer: TokenIssuer,
    private readonly rotations: RefreshRotations,
    private readonly defaultClientId: string,
    private readonly events: TokenEvents = {},
  ) {}

  /**
   * `request` undefined: the service's own route, which ignores the client binding and always gives an
   * ID token. `dpopJkt`: the key of the request's DPoP proof, checked and spent (undefined: none);
   * the new tokens and the session are bound to it.
   */
  async refresh(refreshToken: string, origin: RequestOrigin, request?: RefreshTokenRequest, dpopJkt?: string): Promise<OAuthTokenResponse> {
    // A key's refresh token works only from an address its policy allows (contract, "Tokens follow the key").
    const address = clientAddressText(origin.clientAddress);
    const claims = await this.signer.verify(refreshToken, 'Refresh');
    const bound = boundKeyOf(claims);
    // RFC 9449 §5: a bound session's refresh token is redeemed only with a proof by its key; refused before anything changes.
    if (bound !== undefined && dpopJkt !== bound) {
      throw new DpopProofError(dpopJkt === undefined ? 'This refresh token needs a DPoP proof by the key it is bound to' : 'The DPoP proof is by another key than the one this refresh token is bound to');
    }
    if (request?.clientId !== undefined || request?.scope !== undefined) await this.checkAgainstSession(claims.sid, request);
    const next = this.issuer.nextRefresh();
    const rotated = await this.rotations.rotate({
      ...next,
      scope: request?.scope ?? null,
      sessionId: claims.sid,
      principalId: claims.sub,
      presentedJti: claims.jti,
      // RFC 9449 §5: a proof binds an unbound session to its key from now on, as a login with one would.
      dpopJkt: dpopJkt ?? null,
      address,
      origin,
    });
    if (!rotated) {
      if (await revokeSessionOnReuse(this.db, claims.sid, claims.jti, origin)) {
        this.events.onRefreshReuse?.();
        throw new UnauthorizedError('Refresh token was already used; the session has been revoked');
      }
      throw new UnauthorizedError('Invalid or expired refresh token');
    }
    const { principal, times, client } = rotated;
    const subject = {
      type: principal.type,
      id: principal.principal_id,
      name: principal.name,
      role: principal.role,
      permissions: principal.permissions,
      notAfter: principal.not_after,
    };
    const scope = heldScope(principal.role, principal.scope, undefined, principal.permissions);
    return this.issuer.issue(
      subject,
      { id: claims.sid, refreshJti: next.newJti, times, now: next.now },
      {
        scope,
        clientId: sessionClientId({ client_id: client.id, type: principal.type, name: principal.name }, this.defaultClientId),
        refreshToken: true,
        idToken: request === undefined || (client.idToken && scopeWords(scope).includes('openid')),
        dpopJkt,
      },
    );
  }

  /** The binding and the scope, checked before anything changes: a mismatch is not the reuse signal. */
  private async checkAgainstSession(sessionId: string, request: RefreshTokenRequest): Promise<void> {
    const grant = await findSessionGrant(this.db, sessionId);
    if (!grant) throw new UnauthorizedError('Invalid or expired refresh token');
    if (request.clientId !== undefined && request.clientId !== sessionClientId(grant, this.defaultClientId)) {
      throw new OAuthError('invalid_grant', 'The refresh token was issued to another client');
    }
    if (request.scope !== undefined && !scopeWithin(request.scope, scopeWords(heldScope(grant.role, grant.scope, undefined, grant.permissions)))) {
      throw new OAuthError('invalid_scope', 'A refresh may keep or narrow the session\'s scope, not widen it');
    }
  }
}

