import type { Queryable } from '../db/database';
import type { ImportListener } from './key-import.service';

/** How often every instance asks the database whether an imported key is left: the window in docs/secret-scanning.md. */
export const IMPORTED_KEYS_REFRESH_MS = 30_000;

const IMPORTED_SECRET_LEFT = `SELECT EXISTS (SELECT 1 FROM api_keys WHERE key_ciphertext IS NULL)
    OR EXISTS (SELECT 1 FROM api_keys WHERE previous_key_valid_until > now() AND previous_key_ciphertext IS NULL) AS held`;

/**
 * Whether the service may hold a key imported from another system (a key known by its digest only,
 * which may have any shape, even that of an appkey with a wrong checksum). Verification answers a bad
 * `ak_` checksum NOT_FOUND without a database read only while this is false. An imported secret
 * outlives its key's regen by the grace (it still authenticates as the previous key), so a key
 * regenerated with a grace counts as imported until that grace ends.
 *
 * Right across instances in the safe direction: true until the first check has answered, then what
 * the database said at the last check (at start, then every IMPORTED_KEYS_REFRESH_MS), and true at
 * once in the instance that imports. So another instance may answer NOT_FOUND by the checksum for an
 * imported `ak_`-looking key for at most one refresh interval after its import; once the last
 * imported secret is regenerated away (and its grace is over) or deleted, each instance stops reading
 * within one interval.
 */
export class ImportedKeyPresence implements ImportListener {
  /** Undefined until the first check answers. */
  private held: boolean | undefined;
  /** Imports seen here: a check that began before one cannot say false after it. */
  private imports = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly refreshMs = IMPORTED_KEYS_REFRESH_MS,
  ) {}

  /** The predicate verification is given: false only when the last check found no imported key. */
  readonly mayHoldImportedKeys = (): boolean => this.held !== false;

  /** An import committed here. */
  imported(): void {
    this.imports++;
    this.held = true;
  }

  /**
   * Asks the database now: an imported current key, or an imported previous one still in its grace
   * (it has a digest but no sealed appkey). Each half reads a partial index. A failed check changes nothing.
   */
  async refresh(): Promise<void> {
    const importsBefore = this.imports;
    try {
      const { rows } = await this.db.query<{ held: boolean }>(IMPORTED_SECRET_LEFT);
      const held = rows[0]!.held;
      if (held || this.imports === importsBefore) this.held = held;
    } catch {
      // The database is away: verification cannot read it either; the next check tries again.
    }
  }

  /** Checks now, then every `refreshMs` until stop(); the timer does not hold the process open. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer ??= setInterval(() => void this.refresh(), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
