import type { Database } from '../db/database';
import { revokeSession } from '../sessions/revocation';
import type { TokenSigner } from '../signing-keys/token-signer';
import type { TokenTypeHint } from './oauth.schemas';
import { verifyPresentedToken } from './presented-token';
import type { RequestOrigin } from '../shared/audit-context';

/**
 * RFC 7009 revocation, which is how a client logs out: an access or refresh token ends its whole
 * session. Anything else is quietly ignored, so the caller learns nothing about the token.
 */
export class RevocationService {
  constructor(
    private readonly db: Database,
    private readonly signer: TokenSigner,
  ) {}

  async revoke(token: string, hint: TokenTypeHint | undefined, origin: RequestOrigin): Promise<void> {
    const presented = await verifyPresentedToken(this.signer, token, hint);
    if (!presented) return;
    const via = presented.kind === 'Refresh' ? 'refresh token' : 'access token';
    await revokeSession(this.db, presented.claims.sid, `revoked by client (${via})`, origin);
  }
}
