import bcrypt from 'bcrypt';
import type { Database } from '../db/database';
import { ExpiringMap } from '../cache/expiring-map';
import { LoginRefusedError } from '../shared/errors';
import { assertPasswordFitsBcrypt } from './password-rules';
import { findUserByUsername, replacePasswordHash, type UserRow } from './users.repository';

/** The one message of every refused password login, whatever the reason. */
const INVALID_CREDENTIALS = 'Invalid username or password';

/**
 * Checks usernames and passwords. A refusal reads the same and takes about as long whether the user
 * is unknown, the password wrong or the user disabled.
 *
 * Users whose credentials verified lately are kept, so their next login needs no round trip for the
 * user row (docs/performance.md, "password"). Only a hint: the caller opens the session only while the
 * database still holds the hash checked here, and answers undefined when it does not; the login is then
 * judged once more against the user as read afresh. Filled only by successful logins, so guessing
 * usernames cannot grow it. Five minutes serve a client that logs in again and again, and keep hashes
 * from lingering.
 */
export class Credentials {
  private dummyHash: Promise<string> | undefined;
  private readonly recentLogins = new ExpiringMap<string, UserRow>({ maxEntries: 1024, ttlMs: 5 * 60_000 });

  constructor(
    private readonly db: Database,
    private readonly bcryptCost: number,
  ) {}

  /**
   * Runs `open` with the user these credentials verify as, or throws the uniform 401. `open` answers
   * undefined when the user changed since the check (new password, disabled or deleted, here or on
   * another instance); the credentials are then judged afresh, once.
   */
  async withVerifiedUser<T>(username: string, password: string, open: (user: UserRow) => Promise<T | undefined>): Promise<T> {
    const opened = await open(await this.verify(username, password));
    if (opened !== undefined) return opened;
    this.forget(username);
    const again = await open(await this.verify(username, password));
    if (again === undefined) throw new LoginRefusedError(INVALID_CREDENTIALS, 'user_changed');
    return again;
  }

  /** Drops what this instance keeps of the user, so their next login reads them afresh. */
  forget(username: string): void {
    this.recentLogins.delete(username);
  }

  /**
   * A user who logged in lately is checked against the hash kept then, without a round trip. A wrong
   * password against it reads the user as any login does, so it costs the same one compare and one
   * read; it is compared again only if the hash has changed.
   */
  private async verify(username: string, password: string): Promise<UserRow> {
    assertPasswordFitsBcrypt(password);
    const recent = this.recentLogins.get(username);
    if (recent) {
      if (await bcrypt.compare(password, recent.password_hash)) return recent;
      this.forget(username);
      const user = await findUserByUsername(this.db, username);
      const changed = user !== undefined && user.password_hash !== recent.password_hash;
      return this.atConfiguredCost(this.acceptOrRefuse(user, changed && (await bcrypt.compare(password, user.password_hash))), password);
    }
    // PostgreSQL text cannot hold NUL, so no user has such a name: it is refused like any unknown one.
    const user = username.includes('\u0000') ? undefined : await findUserByUsername(this.db, username);
    return this.atConfiguredCost(this.acceptOrRefuse(user, await bcrypt.compare(password, user?.password_hash ?? (await this.getDummyHash()))), password);
  }

  /**
   * A hash made at another cost (BCRYPT_COST changed since) is re-made at BCRYPT_COST now that the
   * password is known: otherwise a known user's compare would take longer or shorter than the
   * unknown user's dummy compare, and timing would tell who exists. Only while the database still
   * holds the hash just checked; the kept login gets the new one.
   */
  private async atConfiguredCost(user: UserRow, password: string): Promise<UserRow> {
    if (bcrypt.getRounds(user.password_hash) === this.bcryptCost) return user;
    const rehashed = await bcrypt.hash(password, this.bcryptCost);
    if (!(await replacePasswordHash(this.db, user.id, user.password_hash, rehashed))) return user;
    const current = { ...user, password_hash: rehashed };
    this.recentLogins.set(current.username, current);
    return current;
  }

  private acceptOrRefuse(user: UserRow | undefined, passwordMatches: boolean): UserRow {
    if (!user) throw new LoginRefusedError(INVALID_CREDENTIALS, 'unknown_user');
    if (!passwordMatches) throw new LoginRefusedError(INVALID_CREDENTIALS, 'wrong_password');
    if (user.disabled) throw new LoginRefusedError(INVALID_CREDENTIALS, 'user_disabled');
    this.recentLogins.set(user.username, user);
    return user;
  }

  /** At BCRYPT_COST, as every user's hash is once they have logged in: an unknown user costs what a known one does. */
  private getDummyHash(): Promise<string> {
    this.dummyHash ??= bcrypt.hash('dummy password for unknown users', this.bcryptCost);
    return this.dummyHash;
  }
}
