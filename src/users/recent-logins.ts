import type { UserRow } from './users.repository';

/** Long enough to serve a client that logs in again and again; short enough that hashes do not linger. */
const TTL_MS = 5 * 60_000;
const MAX_USERS = 1024;

/**
 * Users whose credentials verified lately, so their next login needs no round trip for the user row.
 * Only a hint: the session is opened only while the database still holds the hash checked here (see
 * openUserSession), so a stale entry can never let a changed password or a disabled user in.
 * Filled only by successful logins, so guessing usernames cannot grow it.
 */
export class RecentLogins {
  private readonly users = new Map<string, { user: UserRow; until: number }>();

  get(username: string): UserRow | undefined {
    const entry = this.users.get(username);
    if (entry && entry.until > Date.now()) return entry.user;
    if (entry) this.users.delete(username);
    return undefined;
  }

  remember(user: UserRow): void {
    this.users.delete(user.username);
    // A Map keeps insertion order: the first key is the one remembered longest ago.
    if (this.users.size >= MAX_USERS) this.users.delete(this.users.keys().next().value!);
    this.users.set(user.username, { user, until: Date.now() + TTL_MS });
  }

  forget(username: string): void {
    this.users.delete(username);
  }
}
