import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';
import type { Database, Queryable } from '../db/database';
import { badRequest, conflict, notFound } from '../shared/errors';
import { ROLES, type Role } from '../shared/principals';
import { revokeSessionsOfUser, type UserSessionsEndReason } from '../sessions/revocation';
import type { AuditContext } from '../shared/audit-context';
import { recordAuditEvent } from '../audit-trail/audit-trail';
import * as users from './users.repository';
import type { UserRow } from './users.repository';
import type { Credentials } from './credentials';
import { assertNewPasswordAcceptable } from './password-rules';
import { USERNAME_PATTERN, USERNAME_RULE } from '../shared/names';

/** A user as every caller sees one: never the hash. */
export interface User {
  username: string;
  role: Role | null;
  disabled: boolean;
  created_at: Date;
  last_login: Date | null;
}

/** What PUT /api/v1/users/{username} replaces; the command line changes one of the two. */
export interface UserStatusChange {
  role?: Role | null;
  disabled?: boolean;
}

/** The role as the command line names it: one of ROLES, or none. */
export function parseRole(role: string | null): Role | null {
  if (role === null || role === '' || role === 'none') return null;
  if (!(ROLES as readonly string[]).includes(role)) throw badRequest(`role: must be one of ${ROLES.join(', ')} or none`);
  return role as Role;
}

/** 18 random bytes: 24 characters of base64url, far past the password rules. */
const generatePassword = () => randomBytes(18).toString('base64url');

/** A password with its bcrypt hash under way on libuv's thread pool. */
export interface HashedAhead {
  password: string;
  hash: Promise<string>;
}

/**
 * Starts hashing the first admin's password (the given one, else a generated one) before the
 * database is open: on a new embedded database bcrypt then runs beside PGlite's loading instead of
 * after it (~0.3 s at cost 12; runtime.ts, docs/performance.md "Starting"). Not used, it is dropped.
 */
export function hashAhead(bcryptCost: number, password = generatePassword()): HashedAhead {
  const hash = bcrypt.hash(password, bcryptCost);
  // Dropped unused when the database had users after all: its failure then matters to no one.
  hash.catch(() => undefined);
  return { password, hash };
}

const isEnabledAdmin = (user: { role: Role | null; disabled: boolean }) => user.role === 'admin' && !user.disabled;

/** The 409 of a change that would leave the service with no enabled admin, and nobody to manage it. */
const lastAdmin = (username: string, what: string) =>
  conflict(`"${username}" is the last enabled admin: make another user admin before you ${what} this one`);

/**
 * The rules of users, for the API and the command line alike: each change in one transaction with
 * its audit event and the end of the sessions it invalidates, the last enabled admin kept, the login
 * this instance remembers for the user forgotten after.
 */
export class UsersService {
  constructor(
    private readonly db: Database,
    private readonly bcryptCost: number,
    private readonly credentials: Credentials,
  ) {}

  /** Creates a user; without `password` one is generated and returned (the only time it is seen). */
  async create(input: { username: string; role: Role | null; password?: string }, ctx: AuditContext): Promise<{ user: User; generatedPassword?: string }> {
    if (!USERNAME_PATTERN.test(input.username)) throw badRequest(`username: ${USERNAME_RULE}`);
    const generatedPassword = input.password === undefined ? generatePassword() : undefined;
    const created = await this.insert(input.username, await this.hashPassword(input.password ?? generatedPassword!), input.role, ctx);
    if (!created) throw conflict(`User "${input.username}" already exists`);
    return { user: present(created), generatedPassword };
  }

  /** `users add`: the role as the command line names it. */
  async add(username: string, password: string, role: string | null, ctx: AuditContext): Promise<User> {
    return (await this.create({ username, role: parseRole(role), password }, ctx)).user;
  }

  /**
   * Creates the admin named by the environment only while no admin exists at all, so that a deleted
   * one does not come back at the next start while another admin runs the service. Never overwrites
   * a user of that name.
   */
  async bootstrapAdmin(username: string, password: string, ctx: AuditContext, ahead?: HashedAhead): Promise<'created' | 'admin_exists' | 'name_taken'> {
    if (await users.anyAdminExists(this.db)) return 'admin_exists';
    return (await this.insert(username, await this.hashOf(password, ahead), 'admin', ctx)) ? 'created' : 'name_taken';
  }

  /** Whether anyone can log in at all: a production start without a terminal warns when not. */
  async anyExist(): Promise<boolean> {
    return (await users.countUsers(this.db)) > 0;
  }

  /**
   * On a service with no users at all, creates `admin` with a generated password, which `deliver`
   * gets first (a creation it could not deliver would be an admin nobody can log in as). Returns the
   * username, or undefined when any user exists (or one was just made; `retract` is then told).
   * `ahead`: a generated password already being hashed (hashAhead).
   */
  async createFirstAdmin(
    ctx: AuditContext,
    handOver: { deliver: (password: string) => Promise<void>; retract: () => Promise<void> },
    ahead?: HashedAhead,
  ): Promise<string | undefined> {
    if (await this.anyExist()) return undefined;
    const password = ahead?.password ?? generatePassword();
    const hash = await this.hashOf(password, ahead);
    await handOver.deliver(password);
    const created = await this.insert('admin', hash, 'admin', ctx);
    if (!created) await handOver.retract();
    return created?.username;
  }

  /** A page of users ordered by username (byte order). */
  async list(page: { limit: number; after?: string } = { limit: 1000 }): Promise<User[]> {
    return (await users.listUsers(this.db, page)).map(present);
  }

  async get(username: string): Promise<User> {
    const row = await users.findUserByUsername(this.db, username);
    if (!row) throw notFound(`User "${username}" not found`);
    return present(row);
  }

  /**
   * Sets role and disabled (what `change` leaves out stays as it is). A change that would leave no
   * enabled admin is a 409; a change of role or a disabling ends every session of the user, since
   * tokens issued before must not outlive it. No change, no event.
   */
  async update(username: string, change: UserStatusChange, ctx: AuditContext): Promise<User> {
    const updated = await this.db.withTransaction(async (tx) => {
      const { user, otherEnabledAdmins } = await this.lockedUser(tx, username);
      const next = { role: change.role === undefined ? user.role : change.role, disabled: change.disabled ?? user.disabled };
      if (next.role === user.role && next.disabled === user.disabled) return user;
      if (isEnabledAdmin(user) && !isEnabledAdmin(next) && otherEnabledAdmins === 0) throw lastAdmin(user.username, 'demote or disable');
      const row = await users.updateUserStatus(tx, user.id, next);
      const details: Record<string, unknown> = {};
      if (next.role !== user.role) Object.assign(details, { role_before: user.role, role_after: next.role });
      if (next.disabled !== user.disabled) Object.assign(details, { disabled_before: user.disabled, disabled_after: next.disabled });
      const reason: UserSessionsEndReason | undefined = next.disabled && !user.disabled ? 'user_disabled' : next.role !== user.role ? 'role_changed' : undefined;
      if (reason) await revokeSessionsOfUser(tx, user.id, reason, ctx);
      await recordAuditEvent(tx, ctx, { type: 'user.updated', username, details });
      return row;
    });
    this.credentials.forget(username);
    return present(updated);
  }

  /** `users set-role`. */
  async setRole(username: string, role: string | null, ctx: AuditContext): Promise<void> {
    await this.update(username, { role: parseRole(role) }, ctx);
  }

  /** `users disable`. */
  async disable(username: string, ctx: AuditContext): Promise<void> {
    await this.update(username, { disabled: true }, ctx);
  }

  /** `users enable`. */
  async enable(username: string, ctx: AuditContext): Promise<void> {
    await this.update(username, { disabled: false }, ctx);
  }

  /**
   * Sets the password someone else chose for the user (an admin, the command line) and ends every
   * session the user holds: whoever held the old one must not stay logged in.
   */
  async setPassword(username: string, password: string, ctx: AuditContext): Promise<void> {
    const hash = await this.hashPassword(password);
    await this.db.withTransaction(async (tx) => {
      const user = await users.findUserForUpdate(tx, username);
      if (!user) throw notFound(`User "${username}" not found`);
      await this.replacePassword(tx, user, hash, ctx);
    });
    this.credentials.forget(username);
  }

  /** Deletes the user, whose sessions go with it (ON DELETE CASCADE); the last enabled admin stays. */
  async delete(username: string, ctx: AuditContext): Promise<void> {
    await this.db.withTransaction(async (tx) => {
      const { user, otherEnabledAdmins } = await this.lockedUser(tx, username);
      if (isEnabledAdmin(user) && otherEnabledAdmins === 0) throw lastAdmin(user.username, 'delete');
      await users.deleteUserById(tx, user.id);
      await recordAuditEvent(tx, ctx, { type: 'user.deleted', username });
    });
    this.credentials.forget(username);
  }

  /**
   * The new hash, the end of the user's sessions (all, or all but `keepSession`) and the event, on
   * `tx`, where the caller holds the user's row.
   */
  async replacePassword(tx: Queryable, user: UserRow, hash: string, ctx: AuditContext, keepSession?: string): Promise<void> {
    await users.updateUserPassword(tx, user.id, hash);
    await revokeSessionsOfUser(tx, user.id, 'password_changed', ctx, keepSession);
    await recordAuditEvent(tx, ctx, { type: 'user.password_changed', username: user.username });
  }

  /** A new password, checked against the password rules and hashed at BCRYPT_COST. */
  async hashPassword(password: string, field = 'password'): Promise<string> {
    assertNewPasswordAcceptable(password, field);
    return bcrypt.hash(password, this.bcryptCost);
  }

  /** hashPassword, taking the hash begun ahead when it is of this password. */
  private async hashOf(password: string, ahead: HashedAhead | undefined): Promise<string> {
    if (ahead?.password !== password) return this.hashPassword(password);
    assertNewPasswordAcceptable(password, 'password');
    return ahead.hash;
  }

  /**
   * The user's row, locked with every enabled admin's (see lockUserAndEnabledAdmins), and how many
   * enabled admins there are besides; a 404 when there is no such user.
   */
  private async lockedUser(tx: Queryable, username: string): Promise<{ user: UserRow; otherEnabledAdmins: number }> {
    const locked = await users.lockUserAndEnabledAdmins(tx, username);
    const user = locked.find((row) => row.username === username);
    if (!user) throw notFound(`User "${username}" not found`);
    return { user, otherEnabledAdmins: locked.filter((row) => row !== user && isEnabledAdmin(row)).length };
  }

  /** Inserts the user (unless the name is taken) and records it, in one transaction. */
  private insert(username: string, passwordHash: string, role: Role | null, ctx: AuditContext): Promise<UserRow | undefined> {
    return this.db.withTransaction(async (tx) => {
      const created = await users.insertUserIfAbsent(tx, { username, passwordHash, role });
      if (created) await recordAuditEvent(tx, ctx, { type: 'user.created', username, details: { role } });
      return created;
    });
  }
}

/** The user without what no caller may see. */
export function present(row: UserRow): User {
  return { username: row.username, role: row.role, disabled: row.disabled, created_at: row.created_at, last_login: row.last_login };
}
