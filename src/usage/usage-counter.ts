import type { KeyRefusal } from '../shared/key-refusals';
import type { VerifyCode } from '../shared/verify-codes';

const HOUR = 3_600;

/** What a usage row counts: tokens issued, verifications by code, refusals on the token routes by audit reason. */
export type UsageKind = 'tokens' | `verification:${VerifyCode}` | `refused:${KeyRefusal}`;

/** One summed count, as the flush writes it. */
export interface UsageCount {
  keyId: string;
  /** The UTC hour it fell in, Unix seconds. */
  hour: number;
  kind: UsageKind;
  n: number;
}

/**
 * Where the token routes and verification report a key's use. Every call is a few Map operations in
 * memory, never a database write: the UsageRecorder writes the sums in batches.
 */
export interface KeyUsageCounts {
  token(keyId: string): void;
  verification(keyId: string, code: VerifyCode): void;
  refusal(keyId: string, reason: KeyRefusal): void;
  /** A successful use whose `last_used` is written later, with the others (verification of a key without credits). */
  used(keyId: string, at: number): void;
  /** The `last_used` this instance holds for the key and has not written yet (Unix seconds), if any. */
  pendingLastUsed(keyId: string): number | undefined;
}

/** Counts nothing and stamps nothing: the default of the classes that report use, when built without a counter. */
export const UNCOUNTED: KeyUsageCounts = {
  token: () => undefined,
  verification: () => undefined,
  refusal: () => undefined,
  used: () => undefined,
  pendingLastUsed: () => undefined,
};

/**
 * How many distinct (key, hour, kind) sums one instance holds at most between two flushes. Past it a
 * count is dropped (and said in the log by the recorder): memory stays bounded if the database is
 * away for long. At a flush every few seconds a busy instance holds a few thousand.
 */
export const MAX_HELD_COUNTS = 200_000;

/**
 * The counts of this instance since the last flush, summed per key, UTC hour and kind, and the
 * latest successful use of each key whose `last_used` is written in batches.
 */
export class UsageCounter implements KeyUsageCounts {
  private counts = new Map<string, number>();
  private lastUsed = new Map<string, number>();
  /** Counts dropped because MAX_HELD_COUNTS was reached, since the last flush. */
  dropped = 0;

  /** `counting` false (USAGE_COUNTING=false): no counts are kept; the batched `last_used` stamps still are. */
  constructor(
    private readonly clock: () => number,
    private readonly counting = true,
  ) {}

  token(keyId: string): void {
    if (this.counting) this.add(keyId, 'tokens', 1);
  }

  verification(keyId: string, code: VerifyCode): void {
    if (this.counting) this.add(keyId, `verification:${code}`, 1);
  }

  refusal(keyId: string, reason: KeyRefusal): void {
    if (this.counting) this.add(keyId, `refused:${reason}`, 1);
  }

  used(keyId: string, at: number): void {
    const held = this.lastUsed.get(keyId);
    if (held === undefined || held < at) this.lastUsed.set(keyId, at);
  }

  pendingLastUsed(keyId: string): number | undefined {
    return this.lastUsed.get(keyId);
  }

  /** Takes the summed counts, leaving none. */
  takeCounts(): UsageCount[] {
    const taken = this.counts;
    this.counts = new Map();
    return [...taken].map(([id, n]) => {
      const [keyId, hour, kind] = id.split(' ') as [string, string, UsageKind];
      return { keyId, hour: Number(hour), kind, n };
    });
  }

  /** Takes the pending `last_used` stamps, leaving none. */
  takeLastUsed(): Array<{ keyId: string; at: number }> {
    const taken = this.lastUsed;
    this.lastUsed = new Map();
    return [...taken].map(([keyId, at]) => ({ keyId, at }));
  }

  /** Puts back what a failed flush took, so the next one writes it. */
  restore(counts: readonly UsageCount[], lastUsed: ReadonlyArray<{ keyId: string; at: number }>): void {
    for (const c of counts) this.addAt(c.keyId, c.hour, c.kind, c.n);
    for (const u of lastUsed) this.used(u.keyId, u.at);
  }

  private add(keyId: string, kind: UsageKind, n: number): void {
    this.addAt(keyId, Math.floor(this.clock() / HOUR) * HOUR, kind, n);
  }

  private addAt(keyId: string, hour: number, kind: UsageKind, n: number): void {
    const id = `${keyId} ${hour} ${kind}`;
    const held = this.counts.get(id);
    if (held === undefined && this.counts.size >= MAX_HELD_COUNTS) {
      this.dropped += n;
      return;
    }
    this.counts.set(id, (held ?? 0) + n);
  }
}
