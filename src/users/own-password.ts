import bcrypt from 'bcrypt';
import type { Database } from '../db/database';
import { recordAuditEvent } from '../audit-trail/audit-trail';
import { LoginRefusedError } from '../shared/errors';
import type { AuditContext } from '../shared/audit-context';
import type { Credentials } from './credentials';
import { assertPasswordFitsBcrypt } from './password-rules';
import { findUserByUsername, findUserForUpdate } from './users.repository';
import type { UsersService } from './users.service';

/** The one message of a wrong current password. */
const WRONG_CURRENT_PASSWORD = 'The current password is wrong';

/** Who changes their own password: the signed-in user, and the session they do it from. */
export interface SignedInUser {
  id: string;
  username: string;
  sessionId: string;
}

/**
 * A user changing their own password (PUT /api/v1/me/password). The current password is checked as a
 * login checks it: a wrong one is the 401 of a refused login, recorded as `login.failed` and counted
 * by the failed-login limits, so a stolen access token cannot be turned into a guessing oracle or a
 * takeover. On success every other session of the user ends; the one the change came from stays.
 */
export class OwnPasswords {
  constructor(
    private readonly db: Database,
    private readonly users: UsersService,
    private readonly credentials: Credentials,
  ) {}

  async change(who: SignedInUser, currentPassword: string, newPassword: string, ctx: AuditContext): Promise<void> {
    assertPasswordFitsBcrypt(currentPassword, 'current_password');
    const newHash = await this.users.hashPassword(newPassword, 'new_password');
    const user = await findUserByUsername(this.db, who.username);
    // The bearer check found the user live a moment ago; gone or replaced since, it is no login.
    if (!user || user.id !== who.id || !(await bcrypt.compare(currentPassword, user.password_hash))) {
      await this.refuse(who, ctx, user && user.id === who.id ? 'wrong_password' : 'user_changed');
    }
    await this.db.withTransaction(async (tx) => {
      const locked = await findUserForUpdate(tx, who.username);
      // Changed by someone else between the check and now: the current password checked above may be stale.
      if (!locked || locked.password_hash !== user!.password_hash) throw new LoginRefusedError(WRONG_CURRENT_PASSWORD, 'user_changed');
      await this.users.replacePassword(tx, locked, newHash, ctx, who.sessionId);
    });
    this.credentials.forget(who.username);
  }

  private async refuse(who: SignedInUser, ctx: AuditContext, reason: 'wrong_password' | 'user_changed'): Promise<never> {
    await recordAuditEvent(this.db, ctx, { type: 'login.failed', username: who.username, details: { route: ctx.route, reason } });
    throw new LoginRefusedError(WRONG_CURRENT_PASSWORD, reason);
  }
}
