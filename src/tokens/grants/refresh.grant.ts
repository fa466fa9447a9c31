import type { Database } from '../../db/database';
import type { RefreshRotations } from '../../sessions/refresh-rotations';
import { revokeSessionOnReuse } from '../../sessions/revocation';
import type { TokenSigner } from '../../signing-keys/token-signer';
import { UnauthorizedError } from '../../shared/errors';
import type { RequestOrigin } from '../../shared/audit-context';
import type { TokenIssuer } from '../token-issuer';
import type { TokenResponse } from '../tokens.responses';

/** Hooks for what the grants detect, e.g. for metrics; the grants know nothing of who listens. */
export interface TokenEvents {
  /** A refresh token was presented again after use; its session has just been revoked. */
  onRefreshReuse?: () => void;
}

/**
 * POST /api/auth/bearer/refresh: consumes the refresh token and issues a new pair in the same session.
 * A token that verifies but is no longer the session's current one has been used before: the
 * session is revoked.
 */
export class RefreshGrant {
  constructor(
    private readonly db: Database,
    private readonly signer: TokenSigner,
    private readonly issuer: TokenIssuer,
    private readonly rotations: RefreshRotations,
    private readonly events: TokenEvents = {},
  ) {}

  async refresh(refreshToken: string, origin: RequestOrigin): Promise<TokenResponse> {
    const claims = await this.signer.verify(refreshToken, 'Refresh');
    const next = this.issuer.nextRefresh();
    const rotated = await this.rotations.rotate({ ...next, sessionId: claims.sid, principalId: claims.sub, presentedJti: claims.jti, origin });
    if (!rotated) {
      if (await revokeSessionOnReuse(this.db, claims.sid, claims.jti, origin)) {
        this.events.onRefreshReuse?.();
        throw new UnauthorizedError('Refresh token was already used; the session has been revoked');
      }
      throw new UnauthorizedError('Invalid or expired refresh token');
    }
    const { principal, times } = rotated;
    const subject = { type: principal.type, id: principal.principal_id, name: principal.name, role: principal.role };
    return this.issuer.issue(subject, { id: claims.sid, refreshJti: next.newJti, times, now: next.now });
  }
}
