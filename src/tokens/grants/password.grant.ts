import type { Database } from '../../db/database';
import { openUserSession } from '../../sessions/opening';
import type { Credentials } from '../../users/credentials';
import type { UserRow } from '../../users/users.repository';
import { OAuthError } from '../../shared/errors';
import type { RequestOrigin } from '../../shared/audit-context';
import { scopeWords } from '../../shared/principals';
import { recordingRefusals } from '../failed-logins';
import type { TokenIssuer } from '../token-issuer';
import type { OAuthTokenResponse } from '../tokens.responses';

/** What a password login asks for beyond the credentials (the token endpoint's parameters). */
export interface PasswordTokenRequest {
  /** Checked within the user's role as the login's statement reads it; undefined: all the role grants. */
  scope?: string;
  /** The client the login is for; null: DEFAULT_CLIENT_ID. */
  clientId: string | null;
  /** The key of the request's DPoP proof, checked and spent: the session's tokens are bound to it. */
  dpopJkt?: string;
}

/** The service's own route: no scope, no client, and the ID token it always gave. */
const OWN_ROUTE: PasswordTokenRequest = { clientId: null };

/** A username and password open a session of that user: POST /api/auth/bearer/token, and the token endpoint's password grant. */
export class PasswordGrant {
  constructor(
    private readonly db: Database,
    private readonly issuer: TokenIssuer,
    private readonly credentials: Credentials,
    private readonly defaultClientId: string,
  ) {}

  login(username: string, password: string, origin: RequestOrigin, request: PasswordTokenRequest = OWN_ROUTE): Promise<OAuthTokenResponse> {
    // No username is longer than 64 characters; a longer one is cut so a caller cannot grow the trail
    // at will. NUL, which text cannot hold, is recorded as U+FFFD.
    const claimant = () => ({ username: username.slice(0, 64).replaceAll('\u0000', '\uFFFD') });
    return recordingRefusals(this.db, origin, claimant, () =>
      this.credentials.withVerifiedUser(username, password, (user) => this.open(user, origin, request)),
    );
  }

  /** Undefined when the user no longer holds the password hash the credentials were checked against. */
  /**
   * The user row may be one this instance kept from an earlier login: its role is never trusted.
   * The session's statement checks the scope against the role as the database holds it.
   */
  private async open(user: UserRow, origin: RequestOrigin, request: PasswordTokenRequest): Promise<OAuthTokenResponse | undefined> {
    // On the token endpoint an ID token is for a named client that asks for openid (an end user is present).
    const idTokenClient = request.clientId !== null && request.scope !== undefined && scopeWords(request.scope).includes('openid');
    const session = this.issuer.newSession(origin);
    const opened = await openUserSession(this.db, {
      ...session,
      userId: user.id,
      username: user.username,
      passwordHash: user.password_hash,
      clientId: request.clientId,
      scope: request.scope ?? null,
      idToken: idTokenClient,
      dpopJkt: request.dpopJkt ?? null,
    });
    if (!opened) return undefined;
    if (!opened.times) throw new OAuthError('invalid_scope', 'The requested scope is not within what the user\'s role grants');
    const subject = { type: 'user', id: user.id, name: user.username, role: opened.role } as const;
    return this.issuer.issue(
      subject,
      { id: session.id, refreshJti: session.refreshJti, times: opened.times, now: session.now },
      {
        scope: request.scope,
        clientId: request.clientId ?? this.defaultClientId,
        refreshToken: true,
        idToken: request === OWN_ROUTE || idTokenClient,
        dpopJkt: request.dpopJkt,
      },
    );
  }
}
