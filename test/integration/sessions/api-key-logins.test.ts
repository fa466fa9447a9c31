import { randomBytes, randomUUID } from 'node:crypto';
import { openApiKeySessions, type ApiKeyLogin } from '../../../src/sessions/api-key-opening';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createApiKey, type TestApiKey } from '../../helpers/factories';
import { createKeyWithPolicy } from '../key-policies/support';
import { tokenIssuedEventsOf } from './support';

/**
 * The statement that opens the sessions of a batch of API-key logins, on the real database. Over
 * HTTP, which requests share a batch depends on timing; here the batch is chosen, so what one login
 * in a batch must not do to another is pinned down.
 */
describe('openApiKeySessions (API-key logins, many in one statement)', () => {
  let t: TestApp;
  let key: TestApiKey;
  let other: TestApiKey;

  beforeAll(async () => {
    t = await startTestApp();
    key = await createApiKey(t, { role: 'editor' });
    other = await createApiKey(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  async function stored(appname: string) {
    const { rows } = await t.db.query<{ id: string; key_generation: number; policy_version: number; credits_remaining: string | null; last_used: Date | null }>(
      'SELECT id, key_generation, policy_version, credits_remaining, last_used FROM api_keys WHERE appname = $1',
      [appname],
    );
    return rows[0]!;
  }

  async function loginOf(appname: string, overrides: Partial<ApiKeyLogin> = {}): Promise<ApiKeyLogin> {
    const { id, key_generation, policy_version, credits_remaining } = await stored(appname);
    const now = Math.floor(Date.now() / 1000);
    return {
      now,
      id: randomUUID(),
      refreshJti: randomUUID(),
      refreshTtlSeconds: 1800,
      maxTtlSeconds: 36_000,
      scope: null,
      dpopJkt: null,
      origin: { clientAddress: '192.0.2.7', requestId: randomUUID(), route: '/api/v1/auth/token' },
      apiKeyId: id,
      keyGeneration: key_generation,
      policyVersion: policy_version,
      credits: credits_remaining !== null,
      policyNow: Date.now() / 1000,
      jti: randomUUID(),
      jtiExpiresAt: now + 330,
      dpopProof: null,
      ...overrides,
    };
  }

  const count = async (sql: string, values: unknown[]) => Number((await t.db.query<{ n: string }>(sql, values)).rows[0]!.n);
  const sessionsOf = (logins: ApiKeyLogin[]) => count('SELECT count(*) AS n FROM sessions WHERE id = ANY($1::uuid[])', [logins.map((l) => l.id)]);
  const eventsOf = (logins: ApiKeyLogin[]) => tokenIssuedEventsOf(t, logins);

  it('when a batch holds logins of two keys, then each gets its outcome in order, with its own key’s role, session and event', async () => {
    const logins = [await loginOf(key.appname), await loginOf(other.appname), await loginOf(key.appname)];

    const outcomes = await openApiKeySessions(t.db, logins);

    expect(outcomes).toEqual([
      { opened: true, role: 'editor', times: { created_at: logins[0]!.now, refresh_expires_at: logins[0]!.now + 1800 }, notAfter: null },
      { opened: true, role: 'viewer', times: { created_at: logins[1]!.now, refresh_expires_at: logins[1]!.now + 1800 }, notAfter: null },
      { opened: true, role: 'editor', times: { created_at: logins[2]!.now, refresh_expires_at: logins[2]!.now + 1800 }, notAfter: null },
    ]);
    expect(await sessionsOf(logins)).toBe(3);
    expect(await eventsOf(logins)).toBe(3);
  });

  it('when one jti appears twice in a batch, then the first opens a session and the second is a replay', async () => {
    const first = await loginOf(other.appname);
    const again = { ...(await loginOf(other.appname)), jti: first.jti };

    const outcomes = await openApiKeySessions(t.db, [first, again]);

    expect(outcomes.map((o) => (o.opened ? 'opened' : o.refused))).toEqual(['opened', 'replayed']);
    expect(await sessionsOf([first, again])).toBe(1);
    expect(await eventsOf([again])).toBe(0);
  });

  it('when one DPoP proof appears twice in a batch, or was spent before, then only the first login opens, and the others write nothing, not even their jti', async () => {
    const proof = { digest: randomBytes(32), expiresAt: Math.floor(Date.now() / 1000) + 60 };
    const first = await loginOf(other.appname, { dpopJkt: 'jkt', dpopProof: proof });
    const again = await loginOf(other.appname, { dpopJkt: 'jkt', dpopProof: proof });

    const outcomes = await openApiKeySessions(t.db, [first, again]);
    const later = await openApiKeySessions(t.db, [await loginOf(other.appname, { dpopJkt: 'jkt', dpopProof: proof })]);

    expect([...outcomes, ...later].map((o) => (o.opened ? 'opened' : o.refused))).toEqual(['opened', 'proof_replayed', 'proof_replayed']);
    expect(await sessionsOf([first, again])).toBe(1);
    expect(await count('SELECT count(*) AS n FROM request_token_jtis WHERE jti = $1', [again.jti])).toBe(0);
    expect(await count('SELECT count(*) AS n FROM sessions WHERE id = $1 AND dpop_jkt = $2', [first.id, 'jkt'])).toBe(1);
  });

  it('when a login’s key is gone or its appkey generation no longer valid, then it alone is stale and nothing of it is written', async () => {
    const good = await loginOf(key.appname);
    const outdated = await loginOf(key.appname, { keyGeneration: (await stored(key.appname)).key_generation - 1 });
    const deleted = await loginOf(key.appname, { apiKeyId: randomUUID() });

    const outcomes = await openApiKeySessions(t.db, [outdated, good, deleted]);

    expect(outcomes.map((o) => (o.opened ? 'opened' : o.refused))).toEqual(['stale', 'opened', 'stale']);
    expect(await sessionsOf([outdated, deleted])).toBe(0);
    expect(await count('SELECT count(*) AS n FROM request_token_jtis WHERE jti = ANY($1::text[])', [[outdated.jti, deleted.jti]])).toBe(0);
  });

  it('when several logins of one key share a batch, then its last login and address are the batch’s last', async () => {
    const early = await loginOf(other.appname);
    const late = await loginOf(other.appname, { now: early.now + 1, origin: { ...early.origin, clientAddress: '198.51.100.9' } });

    await openApiKeySessions(t.db, [early, late]);

    const { rows } = await t.db.query('SELECT last_login, last_ip FROM api_keys WHERE appname = $1', [other.appname]);
    expect(rows[0]).toEqual({ last_login: String(late.now), last_ip: '198.51.100.9' });
  });

  // Each combination of DPoP proofs, scopes and credits in a batch is a statement of its own (api-key-opening.ts):
  // a login must get the same outcome whichever its batch's neighbours make it.

  it('when a key with credits shares a batch with keys without, then only its credits are spent, and every key is stamped as used', async () => {
    const metered = await createKeyWithPolicy(t, { credits: { remaining: 5 } });
    const logins = [await loginOf(other.appname), await loginOf(metered.appname), await loginOf(key.appname), await loginOf(metered.appname)];

    const outcomes = await openApiKeySessions(t.db, logins);

    expect(outcomes.map((o) => o.opened)).toEqual([true, true, true, true]);
    expect((await stored(metered.appname)).credits_remaining).toBe('3');
    expect((await stored(other.appname)).credits_remaining).toBeNull();
    for (const appname of [other.appname, key.appname]) expect((await stored(appname)).last_used!.getTime()).toBeGreaterThanOrEqual(Math.floor(logins[0]!.policyNow) * 1000);
  });

  it('when a batch without credits stamps a key used twice in it, then its last use is the later moment', async () => {
    const early = await loginOf(key.appname, { policyNow: Date.now() / 1000 + 100 });
    const late = await loginOf(key.appname, { policyNow: Date.now() / 1000 + 200 });

    await openApiKeySessions(t.db, [late, early]);

    expect((await stored(key.appname)).last_used!.getTime() / 1000).toBeCloseTo(late.policyNow, 0);
  });

  it('when a login judged without credits finds its key with credits under the same policy version, then it is stale and writes nothing', async () => {
    const judged = await loginOf(other.appname);
    // Only a policy change gives a key credits, and it bumps the version; this forges the impossible case the guard is for.
    await t.db.query('UPDATE api_keys SET credits_remaining = 1, credits_updated_at = now() WHERE id = $1', [judged.apiKeyId]);
    try {
      const outcomes = await openApiKeySessions(t.db, [judged]);

      expect(outcomes).toEqual([{ opened: false, refused: 'stale' }]);
      expect(await sessionsOf([judged])).toBe(0);
      expect((await stored(other.appname)).credits_remaining).toBe('1');
    } finally {
      await t.db.query('UPDATE api_keys SET credits_remaining = NULL, credits_updated_at = NULL WHERE id = $1', [judged.apiKeyId]);
    }
  });

  it('when one login of a batch asks for a scope its key’s role does not grant, then it alone is refused, and it writes nothing, not even its jti', async () => {
    const granted = await loginOf(other.appname, { scope: 'api-keys:read' });
    const beyond = await loginOf(other.appname, { scope: 'api-keys:admin' });
    const plain = await loginOf(key.appname);

    const outcomes = await openApiKeySessions(t.db, [granted, beyond, plain]);

    expect(outcomes.map((o) => (o.opened ? 'opened' : o.refused))).toEqual(['opened', 'scope', 'opened']);
    expect(await count('SELECT count(*) AS n FROM request_token_jtis WHERE jti = $1', [beyond.jti])).toBe(0);
  });
});
