import { randomUUID } from 'node:crypto';
import { spendKeyUses, type KeyUse } from '../../../src/api-keys/key-uses';
import { KeyUses } from '../../../src/api-keys/key-use-batches';
import type { Queryable } from '../../../src/db/database';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createKeyWithPolicy, putPolicy } from '../key-policies/support';

/**
 * The statement that spends the uses of keys that open no session (verification, client
 * authentication), many in one, on the real database. Over HTTP which uses share a batch depends on
 * timing; here the batch is chosen, so what one use in a batch does to the others is pinned down: a
 * batch must answer exactly what its uses would, run one after another.
 */
describe('spendKeyUses (uses of keys, many in one statement)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  /** A key with `policy`, and a use of it now at `cost` as judged against its policy as stored. */
  async function keyWith(policy: Record<string, unknown>, role: 'viewer' | 'editor' = 'viewer') {
    const key = await createKeyWithPolicy(t, policy, role);
    const { rows } = await t.db.query<{ id: string; policy_version: number; key_generation: number }>(
      'SELECT id, policy_version, key_generation FROM api_keys WHERE appname = $1',
      [key.appname],
    );
    const { id, policy_version, key_generation } = rows[0]!;
    const use = (cost: number, overrides: Partial<KeyUse> = {}): KeyUse => ({ keyId: id, version: policy_version, generation: key_generation, cost, now: Date.now() / 1000, ...overrides });
    return { ...key, id, use };
  }

  async function stored(id: string) {
    const { rows } = await t.db.query<{ credits_remaining: string | null; credits_updated_at: number | null; last_used: number | null }>(
      `SELECT credits_remaining, extract(epoch FROM credits_updated_at)::float8 AS credits_updated_at, extract(epoch FROM last_used)::float8 AS last_used
         FROM api_keys WHERE id = $1`,
      [id],
    );
    const row = rows[0]!;
    return { ...row, credits_remaining: row.credits_remaining === null ? null : Number(row.credits_remaining) };
  }

  it('when one key’s uses of mixed costs share a batch, then each sees what the ones before it spent, and a cost that does not fit spends nothing while a later smaller one still may', async () => {
    const key = await keyWith({ credits: { remaining: 5 } }, 'editor');

    const outcomes = await spendKeyUses(t.db, [key.use(6), key.use(3), key.use(3), key.use(2), key.use(0), key.use(1)]);

    expect(outcomes).toEqual([
      { used: false, stale: false, available: 5 },
      { used: true, remaining: 2, role: 'editor' },
      { used: false, stale: false, available: 2 },
      { used: true, remaining: 0, role: 'editor' },
      // At 0 a key is refused even to a use that costs nothing.
      { used: false, stale: false, available: 0 },
      { used: false, stale: false, available: 0 },
    ]);
    expect((await stored(key.id)).credits_remaining).toBe(0);
  });

  it('when a cost of 0 comes while credits are left, then it is admitted and spends nothing', async () => {
    const key = await keyWith({ credits: { remaining: 2 } });

    const outcomes = await spendKeyUses(t.db, [key.use(0), key.use(2), key.use(0)]);

    expect(outcomes.map((o) => (o.used ? o.remaining : `refused at ${(o as { available: number }).available}`))).toEqual([2, 0, 'refused at 0']);
  });

  it('when a use judged against a policy since changed shares a batch with fresh uses, then it alone is stale and writes nothing, and the others spend as if it were not there', async () => {
    const changed = await keyWith({ credits: { remaining: 3 } });
    const other = await keyWith({ credits: { remaining: 4 } });
    const judgedBefore = changed.use(1);
    await putPolicy(t, changed.appname, { credits: { remaining: 3 }, permissions: ['reports'] });
    const fresh = await keyWith({ credits: { remaining: 1 } });

    const outcomes = await spendKeyUses(t.db, [judgedBefore, other.use(2), judgedBefore, other.use(2), fresh.use(1)]);

    expect(outcomes).toEqual([
      { used: false, stale: true },
      { used: true, remaining: 2, role: 'viewer' },
      { used: false, stale: true },
      { used: true, remaining: 0, role: 'viewer' },
      { used: true, remaining: 0, role: 'viewer' },
    ]);
    expect(await stored(changed.id)).toMatchObject({ credits_remaining: 3, last_used: null });
    expect((await stored(other.id)).credits_remaining).toBe(0);
  });

  it('when a use names a key gone or an appkey generation no longer valid, then it is stale; a use that checks no generation is not', async () => {
    const key = await keyWith({ credits: { remaining: 2 } });

    const outcomes = await spendKeyUses(t.db, [key.use(1, { keyId: randomUUID() }), key.use(1, { generation: -1 }), key.use(1, { generation: null })]);

    expect(outcomes).toEqual([{ used: false, stale: true }, { used: false, stale: true }, { used: true, remaining: 1, role: 'viewer' }]);
  });

  it('when a key without credits shares a batch with one that has them, then its uses all pass at any cost and only stamp last_used, at the latest', async () => {
    const unlimited = await keyWith({});
    const counted = await keyWith({ credits: { remaining: 1 } });
    const early = unlimited.use(1000, { now: 1_700_000_000.5 });
    const late = unlimited.use(0, { now: 1_700_000_100.25 });

    const outcomes = await spendKeyUses(t.db, [late, counted.use(1), early, counted.use(1)]);

    expect(outcomes).toEqual([
      { used: true, remaining: null, role: 'viewer' },
      { used: true, remaining: 0, role: 'viewer' },
      { used: true, remaining: null, role: 'viewer' },
      { used: false, stale: false, available: 0 },
    ]);
    expect(await stored(unlimited.id)).toEqual({ credits_remaining: null, credits_updated_at: null, last_used: 1_700_000_100.25 });
  });

  it('when refused uses are all a key has in the batch, then nothing of it is written, not even last_used', async () => {
    const key = await keyWith({ credits: { remaining: 1 } });

    expect(await spendKeyUses(t.db, [key.use(2), key.use(5)])).toEqual([
      { used: false, stale: false, available: 1 },
      { used: false, stale: false, available: 1 },
    ]);
    expect(await stored(key.id)).toMatchObject({ credits_remaining: 1, last_used: null });
  });

  it('when a batch straddles a refill boundary, then each use sees the refill as of its own moment, as one use after another would', async () => {
    const key = await keyWith({ credits: { remaining: 0, refill: { amount: 3, interval: 'day' } } });
    const midnight = Math.floor(Date.now() / 86_400_000) * 86_400;
    await t.db.query('UPDATE api_keys SET credits_updated_at = to_timestamp($2) WHERE id = $1', [key.id, midnight - 10]);

    const outcomes = await spendKeyUses(t.db, [
      // Before midnight: still the old day's 0.
      key.use(1, { now: midnight - 5 }),
      // After it: refilled to 3.
      key.use(2, { now: midnight + 5 }),
      key.use(2, { now: midnight + 6 }),
      // Judged before midnight but spent after the refill was: the refill is not taken twice.
      key.use(1, { now: midnight - 1 }),
    ]);

    expect(outcomes.map((o) => (o.used ? o.remaining : `refused at ${(o as { available: number }).available}`))).toEqual(['refused at 0', 1, 'refused at 1', 0]);
    expect(await stored(key.id)).toEqual({ credits_remaining: 0, credits_updated_at: midnight + 5, last_used: midnight + 5 });
  });

  it('when batches of the same keys in opposite orders run at once, then none waits on another forever and the credits come out exact', async () => {
    const a = await keyWith({ credits: { remaining: 30 } });
    const b = await keyWith({ credits: { remaining: 30 } });

    const batches = await Promise.all(Array.from({ length: 10 }, (_, i) => spendKeyUses(t.db, i % 2 ? [a.use(1), b.use(2)] : [b.use(2), a.use(1)])));

    expect(batches.flat().every((o) => o.used)).toBe(true);
    expect([(await stored(a.id)).credits_remaining, (await stored(b.id)).credits_remaining]).toEqual([20, 10]);
  });
});

describe('KeyUses (concurrent uses batched)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('when uses arrive while one is being spent, then they share the next statement, and each gets its own outcome', async () => {
    const key = await createKeyWithPolicy(t, { credits: { remaining: 7 } });
    const { rows } = await t.db.query<{ id: string; policy_version: number }>('SELECT id, policy_version FROM api_keys WHERE appname = $1', [key.appname]);
    const { id, policy_version } = rows[0]!;
    // The real database, with each statement's batch size noted on the way.
    const batchSizes: number[] = [];
    const noting: Queryable = {
      query: (text, values) => t.db.query(text, values),
      queryPrepared: (statement, values) => {
        batchSizes.push((values[0] as unknown[]).length);
        return t.db.queryPrepared(statement, values);
      },
    };
    const uses = new KeyUses(noting);

    const outcomes = await Promise.all(Array.from({ length: 10 }, () => uses.spend({ keyId: id, version: policy_version, generation: null, cost: 1, now: Date.now() / 1000 })));

    expect(batchSizes).toEqual([1, 9]);
    expect(outcomes.map((o) => (o.used ? o.remaining : 'refused'))).toEqual([6, 5, 4, 3, 2, 1, 0, 'refused', 'refused', 'refused']);
  });
});
