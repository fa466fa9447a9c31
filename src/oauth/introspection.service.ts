import type { Database } from '../db/database';
import { forbidden } from '../shared/errors';
import { findLivePrincipal, findLiveRefreshPrincipal, findSessionGrant } from '../sessions/liveness';
import type { TokenSigner } from '../signing-keys/token-signer';
import type { TokenTypeHint } from './oauth.schemas';
import type { IntrospectionResult } from './oauth.responses';
import { sessionClientId } from '../tokens/session-client';
import { verifyPresentedToken, type PresentedToken } from './presented-token';
import { boundKeyOf } from '../dpop/dpop';
import { allows, heldScope, type Principal } from '../shared/principals';

const INACTIVE: IntrospectionResult = Object.freeze({ active: false });

/**
 * RFC 7662 introspection: whether an access or refresh token would be accepted right now
 * (signature, claims, session and principal live; for a refresh token, still the session's
 * current one), for whichever audience it was issued. Every other case is exactly `{active: false}`,
 * with no reason given. A DPoP-bound token says so (`cnf.jkt`, RFC 9449 §6.2), an exchanged one who
 * acts (`act`, RFC 8693 §4.1).
 */
export class IntrospectionService {
  constructor(
    private readonly db: Database,
    private readonly signer: TokenSigner,
    private readonly defaultClientId: string,
  ) {}

  /** The caller needs `api-keys:read` (viewer and up): token metadata names principals and sessions. */
  async introspect(caller: Principal, token: string, hint?: TokenTypeHint): Promise<IntrospectionResult> {
    if (!allows.read(caller)) throw forbidden('Introspection needs the api-keys:read scope');
    const presented = await verifyPresentedToken(this.signer, token, hint);
    if (!presented) return INACTIVE;
    const { kind, claims } = presented;
    const live =
      kind === 'Refresh' ? await findLiveRefreshPrincipal(this.db, claims.sid, claims.jti) : await findLivePrincipal(this.db, claims.sid);
    if (!live || live.principal_id !== claims.sub) return INACTIVE;
    const clientId = await this.clientOf(presented);
    if (clientId === undefined) return INACTIVE;
    const jkt = boundKeyOf(claims);
    return {
      active: true,
      // An access token's own scope (an exchanged one may hold less than its session), within what the session, role and a key's permissions hold now.
      scope: heldScope(live.role, live.scope, kind === 'Bearer' && typeof claims.scope === 'string' ? claims.scope : undefined, live.permissions),
      client_id: clientId,
      ...(live.type === 'user' && { username: live.name }),
      token_type: kind === 'Refresh' ? 'refresh_token' : 'access_token',
      exp: claims.exp,
      iat: claims.iat,
      sub: claims.sub,
      aud: claims.aud,
      iss: claims.iss,
      jti: claims.jti,
      sid: claims.sid,
      ...(jkt !== undefined && { cnf: { jkt } }),
      ...(isObject(claims.act) && { act: claims.act }),
    };
  }

  /** An access token names its client (RFC 9068 §2.2); a refresh token's is its session's. */
  private async clientOf({ kind, claims }: PresentedToken): Promise<string | undefined> {
    if (kind === 'Bearer' && typeof claims.client_id === 'string') return claims.client_id;
    const grant = await findSessionGrant(this.db, claims.sid);
    return grant && sessionClientId(grant, this.defaultClientId);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
