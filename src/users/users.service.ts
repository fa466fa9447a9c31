import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';
import type { Database, Queryable } from '../db/database';
import { badRequest, conflict, notFound } from '../shared/errors';
import { ROLES, type Role } from '../shared/principals';
import { revokeSessionsOfUser, type UserSessionsEndReason } from '../sessions/revocation';
import type { AuditContext, AuditEvent } from '../shared/audit-context';
import { recordAuditEvent } from '../audit-trail/audit-trail';
import * as users from './users.repository';
import type { UserRow } from './users.repository';
import type { Credentials } from './credentials';
import { assertNewPasswordAcceptable } from './password-rules';
import { USERNAME_PATTERN, USERNAME_RULE } from '../shared/names';

export interface UserView {
  username: string;
  role: Role | null;
  disabled: boolean;
  created_at: string;
}

function parseRole(role: string | null): Role | null {
  if (role === null || role === '' || role === 'none') return null;
  if (!(ROLES as readonly string[]).includes(role)) throw badRequest(`role: must be one of ${ROLES.join(', ')} or none`);
  return role as Role;
}

export class UsersService {
  constructor(
    private readonly db: Database,
    private readonly bcryptCost: number,
    private readonly credentials: Credentials,
  ) {}

  async add(username: string, password: string, role: string | null, ctx: AuditContext): Promise<UserView> {
    if (!USERNAME_PATTERN.test(username)) {
      throw badRequest(`username: ${USERNAME_RULE}`);
    }
    const created = await this.insert(username, await this.hashPassword(password), parseRole(role), ctx);
    if (!created) throw conflict(`User "${username}" already exists`);
    return present(created);
  }

  /**
   * Creates the admin named by the environment only while no admin exists at all, so that a deleted
   * one does not come back at the next start while another admin runs the service. Never overwrites
   * a user of that name.
   */
  async bootstrapAdmin(username: string, password: string, ctx: AuditContext): Promise<'created' | 'admin_exists' | 'name_taken'> {
    if (await users.anyAdminExists(this.db)) return 'admin_exists';
    return (await this.insert(username, await this.hashPassword(password), 'admin', ctx)) ? 'created' : 'name_taken';
  }

  /** Whether anyone can log in at all: a production start without a terminal warns when not. */
  async anyExist(): Promise<boolean> {
    return (await users.countUsers(this.db)) > 0;
  }

  /**
   * On a service with no users at all, creates `admin` with a generated password, which `deliver`
   * gets first (a creation it could not deliver would be an admin nobody can log in as). Returns the
   * username, or undefined when any user exists (or one was just made; `retract` is then told).
   */
  async createFirstAdmin(
    ctx: AuditContext,
    handOver: { deliver: (password: string) => Promise<void>; retract: () => Promise<void> },
  ): Promise<string | undefined> {
    if (await this.anyExist()) return undefined;
    const password = randomBytes(18).toString('base64url');
    const hash = await this.hashPassword(password);
    await handOver.deliver(password);
    const created = await this.insert('admin', hash, 'admin', ctx);
    if (!created) await handOver.retract();
    return created?.username;
  }

  async list(): Promise<UserView[]> {
    return (await users.listUsers(this.db)).map(present);
  }

  /** Changes the role and ends every session of the user: tokens issued under the old role must not outlive it. */
  async setRole(username: string, role: string | null, ctx: AuditContext): Promise<void> {
    const next = parseRole(role);
    await this.changeEndingSessions(username, ctx, async (tx, user) => {
      await users.updateUserRole(tx, username, next);
      return { reason: 'role_changed', event: { type: 'user.role_changed', username, details: { role_before: user.role, role_after: next } } };
    });
  }

  /** Changes the password and ends every session of the user: whoever held the old one must not stay logged in. */
  async setPassword(username: string, password: string, ctx: AuditContext): Promise<void> {
    const hash = await this.hashPassword(password);
    await this.changeEndingSessions(username, ctx, async (tx) => {
      await users.updateUserPassword(tx, username, hash);
      return { reason: 'password_changed', event: { type: 'user.password_changed', username } };
    });
  }

  /** Disables the user and ends every session they hold. */
  async disable(username: string, ctx: AuditContext): Promise<void> {
    await this.changeEndingSessions(username, ctx, async (tx) => {
      await users.updateUserDisabled(tx, username, true);
      return { reason: 'user_disabled', event: { type: 'user.disabled', username } };
    });
  }

  async delete(username: string, ctx: AuditContext): Promise<void> {
    await this.db.withTransaction(async (tx) => {
      if (!(await users.deleteUser(tx, username))) throw notFound(`User "${username}" not found`);
      await recordAuditEvent(tx, ctx, { type: 'user.deleted', username });
    });
    this.credentials.forget(username);
  }

  /** Inserts the user (unless the name is taken) and records it, in one transaction. */
  private insert(username: string, passwordHash: string, role: Role | null, ctx: AuditContext): Promise<UserRow | undefined> {
    return this.db.withTransaction(async (tx) => {
      const created = await users.insertUserIfAbsent(tx, { username, passwordHash, role });
      if (created) await recordAuditEvent(tx, ctx, { type: 'user.created', username, details: { role } });
      return created;
    });
  }

  /**
   * One change to a user, with the end of every session they hold and its audit event, in one
   * transaction; the login this instance kept for them is forgotten after.
   */
  private async changeEndingSessions(
    username: string,
    ctx: AuditContext,
    change: (tx: Queryable, user: UserRow) => Promise<{ reason: UserSessionsEndReason; event: AuditEvent }>,
  ): Promise<void> {
    await this.db.withTransaction(async (tx) => {
      const user = await users.findUserForUpdate(tx, username);
      if (!user) throw notFound(`User "${username}" not found`);
      const { reason, event } = await change(tx, user);
      await revokeSessionsOfUser(tx, user.id, reason, ctx);
      await recordAuditEvent(tx, ctx, event);
    });
    this.credentials.forget(username);
  }

  private async hashPassword(password: string): Promise<string> {
    assertNewPasswordAcceptable(password);
    return bcrypt.hash(password, this.bcryptCost);
  }
}

function present(row: UserRow): UserView {
  return { username: row.username, role: row.role, disabled: row.disabled, created_at: row.created_at.toISOString() };
}
