import { isDatabaseUnavailable } from './database';

export interface CoalescerOptions {
  /** Batches running at once. One keeps batches large and their row locks from waiting on each other. */
  maxInFlight: number;
  maxBatch: number;
}

interface Pending<I, O> {
  item: I;
  resolve: (outcome: O) => void;
  reject: (err: unknown) => void;
}

/**
 * Runs the items submitted while earlier ones are still in flight together, as one batch: one
 * statement and one commit for many requests. A lone request goes at once (no timer, no added
 * latency when idle); under load the items that queued behind the running batch form the next.
 *
 * Most of what a lone write costs PostgreSQL is the commit and the statement's fixed costs, which a
 * batch pays once for all its rows (docs/performance.md, "exchange").
 */
export class Coalescer<I, O> {
  private readonly queue: Pending<I, O>[] = [];
  private inFlight = 0;

  /** `run` answers one outcome per item, in the items' order. */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: CoalescerOptions,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      this.inFlight += 1;
      void this.settle(batch);
    }
  }

  private async settle(batch: Pending<I, O>[]): Promise<void> {
    let outcomes: O[] | undefined;
    try {
      outcomes = await this.runChecked(batch.map((p) => p.item));
    } catch (err) {
      // A failed batch is retried item by item, so one bad item cannot fail the others with it; not
      // when the database is unreachable, where each retry would only fail the same way.
      if (batch.length === 1 || isDatabaseUnavailable(err)) batch.forEach((p) => p.reject(err));
      else await Promise.all(batch.map((p) => this.settleAlone(p)));
    }
    this.inFlight -= 1;
    this.dispatch();
    if (!outcomes) return;
    // The callers resume (and, for a login, sign and send their responses: a few ms of main-thread work
    // for a large batch) only after the next batch has gone out, so the database works on it meanwhile
    // rather than waiting for them. Resolved in this tick, they would run first: continuations of
    // promises run before the driver's own deferred send.
    const settled = outcomes;
    setImmediate(() => batch.forEach((p, i) => p.resolve(settled[i]!)));
  }

  /** `run`, refusing an answer with another count of outcomes than items: no item gets another's. */
  private async runChecked(items: I[]): Promise<O[]> {
    const outcomes = await this.run(items);
    if (outcomes.length !== items.length) throw new Error(`batch of ${items.length} answered ${outcomes.length} outcomes`);
    return outcomes;
  }

  private async settleAlone(pending: Pending<I, O>): Promise<void> {
    try {
      const [outcome] = await this.runChecked([pending.item]);
      pending.resolve(outcome!);
    } catch (err) {
      pending.reject(err);
    }
  }
}
