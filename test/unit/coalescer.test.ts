import { Coalescer } from '../../src/db/coalescer';

/** A batch runner the test releases by hand, recording the batches it was given. */
function gatedRunner(answer: (item: number) => number | Error = (item) => item * 10) {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  const run = async (items: number[]) => {
    batches.push(items);
    await new Promise<void>((release) => gates.push(release));
    const outcomes = items.map(answer);
    const failed = outcomes.find((o): o is Error => o instanceof Error);
    if (failed) throw failed;
    return outcomes as number[];
  };
  /** Lets the oldest waiting batch finish, and waits until what it triggers has started. */
  const releaseNext = async () => {
    gates.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { run, batches, releaseNext };
}

describe('Coalescer', () => {
  it('when idle, then an item runs at once, alone', async () => {
    const runner = gatedRunner();
    const coalescer = new Coalescer(runner.run, { maxInFlight: 1, maxBatch: 10 });

    const outcome = coalescer.submit(1);
    expect(runner.batches).toEqual([[1]]);
    await runner.releaseNext();

    await expect(outcome).resolves.toBe(10);
  });

  it('when items arrive while a batch runs, then they run together next, each getting its own outcome', async () => {
    const runner = gatedRunner();
    const coalescer = new Coalescer(runner.run, { maxInFlight: 1, maxBatch: 10 });

    const outcomes = [1, 2, 3, 4].map((item) => coalescer.submit(item));
    expect(runner.batches).toEqual([[1]]);
    await runner.releaseNext();
    expect(runner.batches).toEqual([[1], [2, 3, 4]]);
    await runner.releaseNext();

    await expect(Promise.all(outcomes)).resolves.toEqual([10, 20, 30, 40]);
  });

  it('when a batch finishes while items wait, then the next batch has been sent before its callers resume', async () => {
    // What counts is what has reached the database: pg-pool sends on process.nextTick, after promise
    // continuations already queued, so this runner records a batch as sent on the next tick too.
    const runner = gatedRunner();
    const sent: number[][] = [];
    const sendingRun = (items: number[]) => {
      process.nextTick(() => sent.push(items));
      return runner.run(items);
    };
    const coalescer = new Coalescer(sendingRun, { maxInFlight: 1, maxBatch: 10 });

    const first = coalescer.submit(1);
    const second = coalescer.submit(2);
    const sentWhenFirstResumed = first.then(() => sent.map((batch) => [...batch]));
    await runner.releaseNext();

    await expect(sentWhenFirstResumed).resolves.toEqual([[1], [2]]);
    await runner.releaseNext();
    await expect(second).resolves.toBe(20);
  });

  it('when more items wait than a batch holds, then they run in batches of at most maxBatch, in arrival order', async () => {
    const runner = gatedRunner();
    const coalescer = new Coalescer(runner.run, { maxInFlight: 1, maxBatch: 2 });

    const outcomes = [1, 2, 3, 4, 5].map((item) => coalescer.submit(item));
    for (let i = 0; i < 3; i++) await runner.releaseNext();

    expect(runner.batches).toEqual([[1], [2, 3], [4, 5]]);
    await expect(Promise.all(outcomes)).resolves.toEqual([10, 20, 30, 40, 50]);
  });

  it('when two batches may run at once, then a second starts while the first runs', async () => {
    const runner = gatedRunner();
    const coalescer = new Coalescer(runner.run, { maxInFlight: 2, maxBatch: 10 });

    const outcomes = [1, 2, 3].map((item) => coalescer.submit(item));

    expect(runner.batches).toEqual([[1], [2]]);
    await runner.releaseNext();
    await runner.releaseNext();
    await runner.releaseNext();
    await expect(Promise.all(outcomes)).resolves.toEqual([10, 20, 30]);
  });

  it('when a batch fails, then its items are retried one by one, and only the failing item is rejected', async () => {
    const boom = new Error('item 3 is bad');
    const runner = gatedRunner((item) => (item === 3 ? boom : item * 10));
    const coalescer = new Coalescer(runner.run, { maxInFlight: 1, maxBatch: 10 });

    const outcomes = [1, 2, 3, 4].map((item) => coalescer.submit(item).catch((err: unknown) => err));
    await runner.releaseNext(); // [1]
    await runner.releaseNext(); // [2, 3, 4] fails
    while (runner.batches.length < 5) await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 3; i++) await runner.releaseNext();

    expect(runner.batches).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
    await expect(Promise.all(outcomes)).resolves.toEqual([10, 20, boom, 40]);
  });

  it('when a batch fails because the database is unreachable, then every item is rejected with it and none is retried', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const runner = gatedRunner(() => refused);
    const coalescer = new Coalescer(runner.run, { maxInFlight: 1, maxBatch: 10 });

    const outcomes = [1, 2, 3].map((item) => coalescer.submit(item).catch((err: unknown) => err));
    await runner.releaseNext(); // [1]
    await runner.releaseNext(); // [2, 3]

    await expect(Promise.all(outcomes)).resolves.toEqual([refused, refused, refused]);
    expect(runner.batches).toEqual([[1], [2, 3]]);
  });

  it('when the runner answers fewer outcomes than items, then no item is resolved with another’s outcome', async () => {
    let calls = 0;
    const coalescer = new Coalescer(
      async (items: number[]) => {
        calls += 1;
        return calls === 2 ? items.slice(1).map((i) => i * 10) : items.map((i) => i * 10);
      },
      { maxInFlight: 1, maxBatch: 10 },
    );

    const outcomes = await Promise.all([1, 2, 3].map((item) => coalescer.submit(item)));

    expect(outcomes).toEqual([10, 20, 30]);
  });
});
