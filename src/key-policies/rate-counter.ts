/**
 * The per-key rate limit's counters: how many authentications a key had in one fixed window. Shared
 * by every instance through Redis when REDIS_URL is set; per instance, in memory, otherwise.
 */
export interface KeyRateCounter {
  /**
   * Counts one use of `counter` in window number `window` (of `windowSeconds`) and answers the count
   * so far, this one included; undefined when it cannot tell (Redis away): the limit then passes, as
   * every other limit does while Redis is down.
   */
  hit(counter: string, windowSeconds: number, window: number): Promise<number | undefined>;
}

/** How many counters one instance keeps at most in memory (docs/performance.md, "key rate limits"). */
export const MEMORY_COUNTERS = 10_000;

/**
 * Counters in this process. A window that ended is forgotten at the next hit; beyond `maxEntries`
 * counters the one used longest ago makes room (a Map iterates in insertion order, and a hit moves
 * its counter to the end), so memory stays bounded however many keys are used.
 */
export class MemoryKeyRateCounter implements KeyRateCounter {
  private readonly counts = new Map<string, { window: number; count: number }>();

  constructor(private readonly maxEntries = MEMORY_COUNTERS) {}

  hit(counter: string, windowSeconds: number, window: number): Promise<number> {
    const key = `${counter}/${windowSeconds}`;
    const held = this.counts.get(key);
    const count = held && held.window === window ? held.count + 1 : 1;
    this.counts.delete(key);
    if (this.counts.size >= this.maxEntries) this.counts.delete(this.counts.keys().next().value!);
    this.counts.set(key, { window, count });
    return Promise.resolve(count);
  }

  /** How many counters are held (for the tests of the bound). */
  get size(): number {
    return this.counts.size;
  }
}

/** INCR, and on the window's first hit the key's expiry (the window's end and a second), in one round trip. */
const HIT_SCRIPT = "local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end return n";

/** Sends one Redis command under the deadline of the service's other Redis commands; rejects when Redis is away. */
export type RedisCommand = (args: string[]) => Promise<unknown>;

/**
 * Counters in Redis, one key per key and window, which expires when its window has ended. Any failure
 * (Redis away, past the command deadline) answers undefined: the limit passes, as the service's own
 * limits do (fail open), and counting resumes once Redis is back.
 */
export class RedisKeyRateCounter implements KeyRateCounter {
  constructor(
    private readonly send: RedisCommand,
    private readonly prefix: string,
  ) {}

  async hit(counter: string, windowSeconds: number, window: number): Promise<number | undefined> {
    const key = `${this.prefix}key-rate:${counter}:${windowSeconds}:${window}`;
    try {
      const count = Number(await this.send(['EVAL', HIT_SCRIPT, '1', key, String(windowSeconds + 1)]));
      return Number.isFinite(count) ? count : undefined;
    } catch {
      return undefined;
    }
  }
}
