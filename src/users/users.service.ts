import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';
import type { Database } from '../db/database';
import { LoginRefusedError, badRequest, conflict, notFound } from '../shared/errors';
import { ROLES, type Role } from '../shared/principals';
import { revokeSessionsOfUser } from '../sessions/sessions.repository';
import type { AuditContext } from '../shared/audit-context';
import { recordAuditEvent } from '../audit-trail/audit-trail';
import * as users from './users.repository';
import type { UserRow } from './users.repository';
import { ExpiringMap } from '../cache/expiring-map';

const USERNAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
const MIN_PASSWORD_LENGTH = 8;
// bcrypt only reads the first 72 bytes; longer passwords are refused rather than silently cut.
const MAX_PASSWORD_BYTES = 72;
/** The one message of every refused password login, whatever the reason. */
export const INVALID_CREDENTIALS = 'Invalid username or password';

export interface UserView {
  username: string;
  role: Role | null;
  disabled: boolean;
  created_at: string;
}

function assertPasswordFitsBcrypt(password: string): void {
  // bcrypt stops at NUL: "abc\0x" would be the password "abc".
  if (password.includes('\u0000')) throw badRequest('password: must not contain NUL characters');
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) {
    throw badRequest(`password: must be at most ${MAX_PASSWORD_BYTES} bytes`);
  }
}

function parseRole(role: string | null): Role | null {
  if (role === null || role === '' || role === 'none') return null;
  if (!(ROLES as readonly string[]).includes(role)) throw badRequest(`role: must be one of ${ROLES.join(', ')} or none`);
  return role as Role;
}

export class UsersService {
  private dummyHash: Promise<string> | undefined;
  /**
   * Users whose credentials verified lately, so their next login needs no round trip for the user row.
   * Only a hint: the session is opened only while the database still holds the hash checked here (see
   * openUserSession), so a stale entry can never let a changed password or a disabled user in. Filled
   * only by successful logins, so guessing usernames cannot grow it. Five minutes serve a client that
   * logs in again and again, and keep hashes from lingering.
   */
  private readonly recentLogins = new ExpiringMap<string, UserRow>({ maxEntries: 1024, ttlMs: 5 * 60_000 });

  constructor(
    private readonly db: Database,
    private readonly bcryptCost: number,
  ) {}

  async add(username: string, password: string, role: string | null, ctx: AuditContext): Promise<UserView> {
    if (!USERNAME_PATTERN.test(username)) {
      throw badRequest('username: 1 to 64 characters of letters, digits, . _ @ -, starting with a letter or digit');
    }
    const created = await this.insert(username, await this.hashPassword(password), parseRole(role), ctx);
    if (!created) throw conflict(`User "${username}" already exists`);
    return present(created);
  }

  /** Creates the admin named by the environment unless a user of that name exists. Never overwrites. */
  async bootstrapAdmin(username: string, password: string, ctx: AuditContext): Promise<boolean> {
    const existing = await users.findUserByUsername(this.db, username);
    if (existing) return false;
    return (await this.insert(username, await this.hashPassword(password), 'admin', ctx)) !== undefined;
  }

  /** Whether anyone can log in at all: a production start without a terminal warns when not. */
  async anyExist(): Promise<boolean> {
    return (await users.countUsers(this.db)) > 0;
  }

  /**
   * On a service with no users at all, creates `admin` with a generated password and returns it, so
   * a newcomer can log in at once. Returns undefined when any user exists (or one was just made).
   */
  async createFirstAdmin(ctx: AuditContext): Promise<{ username: string; password: string } | undefined> {
    if (await this.anyExist()) return undefined;
    const password = randomBytes(18).toString('base64url');
    const created = await this.insert('admin', await this.hashPassword(password), 'admin', ctx);
    return created && { username: created.username, password };
  }

  async list(): Promise<UserView[]> {
    return (await users.listUsers(this.db)).map(present);
  }

  async setRole(username: string, role: string | null, ctx: AuditContext): Promise<void> {
    const next = parseRole(role);
    await this.db.withTransaction(async (tx) => {
      const user = await users.findUserForUpdate(tx, username);
      if (!user) throw notFound(`User "${username}" not found`);
      await users.updateUserRole(tx, username, next);
      await recordAuditEvent(tx, ctx, { type: 'user.role_changed', username, details: { role_before: user.role, role_after: next } });
    });
  }

  async setPassword(username: string, password: string, ctx: AuditContext): Promise<void> {
    const hash = await this.hashPassword(password);
    await this.db.withTransaction(async (tx) => {
      if (!(await users.updateUserPassword(tx, username, hash))) throw notFound(`User "${username}" not found`);
      await recordAuditEvent(tx, ctx, { type: 'user.password_changed', username });
    });
    this.forget(username);
  }

  /** Disables the user and ends every session they hold. */
  async disable(username: string, ctx: AuditContext): Promise<void> {
    await this.db.withTransaction(async (tx) => {
      const user = await users.findUserForUpdate(tx, username);
      if (!user) throw notFound(`User "${username}" not found`);
      await users.updateUserDisabled(tx, username, true);
      await revokeSessionsOfUser(tx, user.id, 'user disabled');
      await recordAuditEvent(tx, ctx, { type: 'user.disabled', username });
    });
    this.forget(username);
  }

  async delete(username: string, ctx: AuditContext): Promise<void> {
    await this.db.withTransaction(async (tx) => {
      if (!(await users.deleteUser(tx, username))) throw notFound(`User "${username}" not found`);
      await recordAuditEvent(tx, ctx, { type: 'user.deleted', username });
    });
    this.forget(username);
  }

  /**
   * The user for these credentials, or a 401 that reads the same and takes about as long whether
   * the user is unknown, the password wrong or the user disabled.
   *
   * A user who logged in lately is checked against the hash read then, without a round trip. The
   * caller must open the session only while that hash is still the user's (openUserSession does), and
   * call forget() when it is not. A wrong password against it reads the user as any login does, so
   * it costs the same one compare and one read; it is compared again only if the hash has changed.
   */
  async verifyCredentials(username: string, password: string): Promise<UserRow> {
    assertPasswordFitsBcrypt(password);
    const recent = this.recentLogins.get(username);
    if (recent) {
      if (await bcrypt.compare(password, recent.password_hash)) return recent;
      this.forget(username);
      const user = await users.findUserByUsername(this.db, username);
      const changed = user !== undefined && user.password_hash !== recent.password_hash;
      return this.judge(user, changed && (await bcrypt.compare(password, user.password_hash)));
    }
    // PostgreSQL text cannot hold NUL, so no user has such a name: it is refused like any unknown one.
    const user = username.includes('\u0000') ? undefined : await users.findUserByUsername(this.db, username);
    return this.judge(user, await bcrypt.compare(password, user?.password_hash ?? (await this.getDummyHash())));
  }

  /** Drops what this instance remembers of the user, so their next login reads them afresh. */
  forget(username: string): void {
    this.recentLogins.delete(username);
  }

  private judge(user: UserRow | undefined, passwordMatches: boolean): UserRow {
    if (!user) throw new LoginRefusedError(INVALID_CREDENTIALS, 'unknown_user');
    if (!passwordMatches) throw new LoginRefusedError(INVALID_CREDENTIALS, 'wrong_password');
    if (user.disabled) throw new LoginRefusedError(INVALID_CREDENTIALS, 'user_disabled');
    this.recentLogins.set(user.username, user);
    return user;
  }

  /** Inserts the user (unless the name is taken) and records it, in one transaction. */
  private insert(username: string, passwordHash: string, role: Role | null, ctx: AuditContext): Promise<UserRow | undefined> {
    return this.db.withTransaction(async (tx) => {
      const created = await users.insertUserIfAbsent(tx, { username, passwordHash, role });
      if (created) await recordAuditEvent(tx, ctx, { type: 'user.created', username, details: { role } });
      return created;
    });
  }

  private async hashPassword(password: string): Promise<string> {
    if (password.length < MIN_PASSWORD_LENGTH) throw badRequest(`password: must be at least ${MIN_PASSWORD_LENGTH} characters`);
    assertPasswordFitsBcrypt(password);
    return bcrypt.hash(password, this.bcryptCost);
  }

  private getDummyHash(): Promise<string> {
    this.dummyHash ??= bcrypt.hash('dummy password for unknown users', this.bcryptCost);
    return this.dummyHash;
  }
}

function present(row: UserRow): UserView {
  return { username: row.username, role: row.role, disabled: row.disabled, created_at: row.created_at.toISOString() };
}
