import { UnauthorizedError } from '../shared/errors';
import type { IssuedClaims, TokenSigner } from '../signing-keys/token-signer';
import type { TokenTypeHint } from './oauth.schemas';

/** An access or refresh token this service issued, with its signature and claims checked. */
export interface PresentedToken {
  kind: 'Bearer' | 'Refresh';
  claims: IssuedClaims;
}

const KIND_OF_HINT = { access_token: 'Bearer', refresh_token: 'Refresh' } as const;

/**
 * Verifies a token presented for revocation or introspection as an access or a refresh token,
 * the hinted kind first (RFC 7009 §2.1: the hint is advisory). Undefined when it is neither
 * (garbage, expired, foreign, an ID token); other failures, a database outage say, propagate.
 */
export async function verifyPresentedToken(signer: TokenSigner, token: string, hint?: TokenTypeHint): Promise<PresentedToken | undefined> {
  const first = hint ? KIND_OF_HINT[hint] : 'Bearer';
  const order = first === 'Bearer' ? (['Bearer', 'Refresh'] as const) : (['Refresh', 'Bearer'] as const);
  for (const kind of order) {
    try {
      // Of any audience this service issues for: an exchanged token is described and revoked like any other.
      return { kind, claims: await signer.verify(token, kind, 'any-issued') };
    } catch (err) {
      if (!(err instanceof UnauthorizedError)) throw err;
    }
  }
  return undefined;
}
