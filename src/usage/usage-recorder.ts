import type { Database } from '../db/database';
import type { Logger } from '../logger';
import { addUsage, stampLastUsed } from './usage.repository';
import { LAST_USED_WINDOW_SECONDS } from '../key-policies/policy';
import type { UsageCounter } from './usage-counter';

export interface UsageRecorderSettings {
  /** USAGE_FLUSH_SECONDS. */
  flushSeconds: number;
}

/**
 * Writes what a UsageCounter summed: the counts every `flushSeconds` in one multi-row upsert, the
 * pending `last_used` stamps every LAST_USED_WINDOW_SECONDS in one UPDATE, both at a graceful stop.
 * A crash loses at most one window of each (docs/verifying-keys.md says so). A flush that fails puts
 * its counts back for the next one.
 */
export class UsageRecorder {
  private timer: NodeJS.Timeout | undefined;
  private logger: Logger | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private lastUsedWrittenAt = Date.now();

  constructor(
    private readonly db: Database,
    readonly counter: UsageCounter,
    private readonly settings: UsageRecorderSettings,
  ) {}

  start(logger: Logger): void {
    this.logger = logger;
    const tick = () => {
      this.timer = setTimeout(() => {
        const lastUsedDue = Date.now() - this.lastUsedWrittenAt >= LAST_USED_WINDOW_SECONDS * 1000;
        this.flush({ lastUsed: lastUsedDue })
          .catch((err: Error) => logger.warn({ cause: err.message }, 'writing usage counts failed; kept for the next flush'))
          .finally(() => {
            if (this.timer) tick();
          });
      }, this.settings.flushSeconds * 1000);
      this.timer.unref();
    };
    tick();
  }

  /** Writes the counts now (and the pending `last_used` stamps unless told not to); flushes never overlap. */
  flush(options: { lastUsed?: boolean } = {}): Promise<void> {
    const run = this.flushing.then(() => this.write(options.lastUsed ?? true));
    this.flushing = run.catch(() => undefined);
    return run;
  }

  /** Stops the timer and writes what is held (a graceful stop loses nothing). */
  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush().catch((err: Error) => this.logger?.warn({ cause: err.message }, 'writing usage counts at stop failed; they are lost'));
  }

  private async write(withLastUsed: boolean): Promise<void> {
    const counts = this.counter.takeCounts();
    const stamps = withLastUsed ? this.counter.takeLastUsed() : [];
    if (this.counter.dropped > 0) {
      this.logger?.warn({ dropped: this.counter.dropped }, 'usage counts dropped: too many held between two flushes');
      this.counter.dropped = 0;
    }
    // Each put back only if its own statement failed: counts written are never counted twice.
    try {
      await addUsage(this.db, counts);
    } catch (err) {
      this.counter.restore(counts, stamps);
      throw err;
    }
    if (!withLastUsed) return;
    try {
      await stampLastUsed(this.db, stamps);
      this.lastUsedWrittenAt = Date.now();
    } catch (err) {
      this.counter.restore([], stamps);
      throw err;
    }
  }
}
