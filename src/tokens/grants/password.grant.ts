import type { Database } from '../../db/database';
import { openUserSession } from '../../sessions/opening';
import type { Credentials } from '../../users/credentials';
import type { UserRow } from '../../users/users.repository';
import type { RequestOrigin } from '../../shared/audit-context';
import { recordingRefusals } from '../failed-logins';
import type { TokenIssuer } from '../token-issuer';
import type { TokenResponse } from '../tokens.responses';

/** POST /api/auth/bearer/token: a username and password open a session of that user. */
export class PasswordGrant {
  constructor(
    private readonly db: Database,
    private readonly issuer: TokenIssuer,
    private readonly credentials: Credentials,
  ) {}

  login(username: string, password: string, origin: RequestOrigin): Promise<TokenResponse> {
    // No username is longer than 64 characters; a longer one is cut so a caller cannot grow the trail
    // at will. NUL, which text cannot hold, is recorded as U+FFFD.
    const claimant = () => ({ username: username.slice(0, 64).replaceAll('\u0000', '\uFFFD') });
    return recordingRefusals(this.db, origin, claimant, () =>
      this.credentials.withVerifiedUser(username, password, (user) => this.open(user, origin)),
    );
  }

  /** Undefined when the user no longer holds the password hash the credentials were checked against. */
  private async open(user: UserRow, origin: RequestOrigin): Promise<TokenResponse | undefined> {
    const session = this.issuer.newSession(origin);
    const opened = await openUserSession(this.db, { ...session, userId: user.id, username: user.username, passwordHash: user.password_hash });
    if (!opened) return undefined;
    const subject = { type: 'user', id: user.id, name: user.username, role: opened.role } as const;
    return this.issuer.issue(subject, { id: session.id, refreshJti: session.refreshJti, times: opened, now: session.now });
  }
}
