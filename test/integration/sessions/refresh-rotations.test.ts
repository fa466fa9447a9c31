import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { rotateRefreshTokens, type RefreshRotation } from '../../../src/sessions/rotation';
import type { TokenResponse } from '../../../src/tokens/tokens.responses';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createUser, loginAs, type TestUser } from '../../helpers/factories';
import { claimsOf } from '../../helpers/tokens';
import { itWithConcurrentConnections } from '../../helpers/database';
import { tokenIssuedEventsOf } from './support';

/**
 * The statement that rotates the refresh tokens of a batch of refreshes, on the real database. Over
 * HTTP, which refreshes share a batch depends on timing; here the batch is chosen. What the batch
 * does not rotate, the grant tries again alone, so "not rotated" must never be a wrong "rotated".
 */
describe('rotateRefreshTokens (refreshes, many in one statement)', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    user = await createUser(t, { role: 'editor' });
  });
  afterAll(() => t.close());

  function rotationOf(login: TokenResponse, overrides: Partial<RefreshRotation> = {}): RefreshRotation {
    const claims = claimsOf(login.refresh_token) as { sid: string; sub: string; jti: string };
    return {
      now: Math.floor(Date.now() / 1000),
      scope: null,
      sessionId: claims.sid,
      principalId: claims.sub,
      presentedJti: claims.jti,
      dpopJkt: null,
      newJti: randomUUID(),
      refreshTtlSeconds: 1800,
      address: '192.0.2.8',
      origin: { clientAddress: '192.0.2.8', requestId: randomUUID(), route: '/api/auth/bearer/refresh' },
      ...overrides,
    };
  }

  const currentJti = async (sessionId: string) =>
    (await t.db.query<{ refresh_jti: string }>('SELECT refresh_jti FROM sessions WHERE id = $1', [sessionId])).rows[0]!.refresh_jti;
  const eventsOf = (rotations: RefreshRotation[]) => tokenIssuedEventsOf(t, rotations);

  it('when a batch holds refreshes of two sessions, then both rotate, in order, each with its principal and event', async () => {
    const rotations = [rotationOf(await loginAs(t, user)), rotationOf(await loginAs(t, user))];

    const rotated = await rotateRefreshTokens(t.db, rotations);

    expect(rotated).toEqual(
      rotations.map((r) => ({
        principal: { session_id: r.sessionId, type: 'user', principal_id: r.principalId, name: user.username, role: 'editor', scope: null, permissions: [], not_after: null },
        times: { created_at: expect.any(Number), refresh_expires_at: r.now + 1800 },
        client: { id: null, idToken: false },
      })),
    );
    for (const r of rotations) expect(await currentJti(r.sessionId)).toBe(r.newJti);
    expect(await eventsOf(rotations)).toBe(2);
  });

  it('when one refresh token appears twice in a batch, then its session rotates once, for exactly one of them', async () => {
    const login = await loginAs(t, user);
    const first = rotationOf(login);
    const again = rotationOf(login);

    const rotated = await rotateRefreshTokens(t.db, [first, again]);

    expect(rotated.filter((r) => r !== undefined)).toHaveLength(1);
    const winner = rotated[0] ? first : again;
    expect(await currentJti(first.sessionId)).toBe(winner.newJti);
    expect(await eventsOf([first, again])).toBe(1);
  });

  it('when a refresh presents a used token, another principal, or a revoked session, then it alone is not rotated and nothing of it changes', async () => {
    const good = rotationOf(await loginAs(t, user));
    const usedLogin = await loginAs(t, user);
    const used = rotationOf(usedLogin, { presentedJti: randomUUID() });
    const someoneElse = rotationOf(await loginAs(t, user), { principalId: randomUUID() });
    const revokedLogin = await loginAs(t, user);
    await t.db.query("UPDATE sessions SET revoked_at = now(), revoked_reason = 'test' WHERE id = $1", [revokedLogin['session-state']]);
    const revoked = rotationOf(revokedLogin);

    const rotated = await rotateRefreshTokens(t.db, [used, good, someoneElse, revoked]);

    expect(rotated.map((r) => r !== undefined)).toEqual([false, true, false, false]);
    expect(await currentJti(used.sessionId)).toBe(claimsOf(usedLogin.refresh_token).jti);
    expect(await eventsOf([used, someoneElse, revoked])).toBe(0);
  });

  it('when a batch carries DPoP keys, then an unbound session is bound to its refresh’s key, a bound one rotates only with its own key, and a refusal leaves it unused', async () => {
    const keyOf = async (sessionId: string) =>
      (await t.db.query<{ dpop_jkt: string | null }>('SELECT dpop_jkt FROM sessions WHERE id = $1', [sessionId])).rows[0]!.dpop_jkt;
    const boundLogin = async (jkt: string) => {
      const login = await loginAs(t, user);
      await t.db.query('UPDATE sessions SET dpop_jkt = $2 WHERE id = $1', [login['session-state'], jkt]);
      return login;
    };
    const binding = rotationOf(await loginAs(t, user), { dpopJkt: 'key-a' });
    const stayingBearer = rotationOf(await loginAs(t, user));
    const sameKey = rotationOf(await boundLogin('key-b'), { dpopJkt: 'key-b' });
    const otherKey = rotationOf(await boundLogin('key-b'), { dpopJkt: 'key-c' });
    const noKey = rotationOf(await boundLogin('key-b'));

    const rotated = await rotateRefreshTokens(t.db, [binding, stayingBearer, sameKey, otherKey, noKey]);

    expect(rotated.map((r) => r !== undefined)).toEqual([true, true, true, false, false]);
    expect(await Promise.all([binding, stayingBearer, sameKey, otherKey, noKey].map((r) => keyOf(r.sessionId)))).toEqual(['key-a', null, 'key-b', 'key-b', 'key-b']);
    for (const refused of [otherKey, noKey]) expect(await currentJti(refused.sessionId)).toBe(refused.presentedJti);
    expect(await eventsOf([otherKey, noKey])).toBe(0);
  });

  it('when one unbound refresh token appears twice in a batch with two keys, then its session rotates once and is bound to the key of the one that rotated', async () => {
    const login = await loginAs(t, user);
    const withA = rotationOf(login, { dpopJkt: 'key-a' });
    const withB = rotationOf(login, { dpopJkt: 'key-b' });

    const rotated = await rotateRefreshTokens(t.db, [withA, withB]);

    expect(rotated.filter((r) => r !== undefined)).toHaveLength(1);
    const winner = rotated[0] ? withA : withB;
    const { rows } = await t.db.query('SELECT refresh_jti, dpop_jkt FROM sessions WHERE id = $1', [login['session-state']]);
    expect(rows[0]).toEqual({ refresh_jti: winner.newJti, dpop_jkt: winner.dpopJkt });
  });

  itWithConcurrentConnections()('when another transaction holds a session’s row, then the batch skips it at once instead of waiting', async () => {
    const busy = rotationOf(await loginAs(t, user));
    const free = rotationOf(await loginAs(t, user));
    const other = new Client({ connectionString: t.config.databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT id FROM sessions WHERE id = $1 FOR UPDATE', [busy.sessionId]);

      const rotated = await rotateRefreshTokens(t.db, [busy, free]);

      expect(rotated.map((r) => r !== undefined)).toEqual([false, true]);
    } finally {
      await other.query('ROLLBACK');
      await other.end();
    }
    expect(await currentJti(busy.sessionId)).toBe(busy.presentedJti);
  });
});
