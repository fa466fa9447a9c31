import { createHmac } from 'node:crypto';
import { Client } from 'pg';
import type { Response } from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createUser, loginAs, type TestUser } from '../../helpers/factories';
import { claimsOf } from '../../helpers/tokens';
import { callProtected, expectTokenResponse, PATHS, refreshWith, sleep } from './support';
import { CLI_CONTEXT } from '../../../src/shared/audit-context';
import { itWithConcurrentConnections } from '../../helpers/database';
import { expectError, expectInvalidToken } from '../../helpers/errors';

describe('POST /api/auth/bearer/refresh (token via refresh token)', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    user = await createUser(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  describe('happy path', () => {
    it('when a refresh token is exchanged (form), then new access and refresh tokens come back in the same session', async () => {
      const login = await loginAs(t, user);

      const res = await refreshWith(t, login.refresh_token);

      expectTokenResponse(res, { accessTtl: 300 });
      expect(res.body['session-state']).toBe(login['session-state']);
      expect(claimsOf(res.body.access_token).sid).toBe(login['session-state']);
      expect(res.body.access_token).not.toBe(login.access_token);
      expect(res.body.refresh_token).not.toBe(login.refresh_token);
      expect((await callProtected(t, res.body.access_token)).status).toBe(200);
    });

    it('when the refresh token is sent as JSON, then 200 in the same session', async () => {
      const login = await loginAs(t, user);

      const res = await t.http().post(PATHS.refresh).send({ refresh_token: login.refresh_token });

      expectTokenResponse(res, { accessTtl: 300 });
      expect(res.body['session-state']).toBe(login['session-state']);
    });

    it('when the new refresh token is used in turn, then it works once more', async () => {
      const login = await loginAs(t, user);
      const second = await refreshWith(t, login.refresh_token);

      const third = await refreshWith(t, second.body.refresh_token);

      expect(third.status).toBe(200);
      expect(third.body['session-state']).toBe(login['session-state']);
    });
  });

  describe('reuse of a used refresh token', () => {
    it('when an already-used refresh token is presented again, then 401', async () => {
      const login = await loginAs(t, user);
      await refreshWith(t, login.refresh_token);

      const reuse = await refreshWith(t, login.refresh_token);

      expectError(reuse, 401, 'Unauthorized');
    });

    it('when a used refresh token is replayed, then the session is revoked: its newest refresh token and its access tokens fail', async () => {
      const login = await loginAs(t, user);
      const rotated = await refreshWith(t, login.refresh_token);
      expect((await callProtected(t, rotated.body.access_token)).status).toBe(200);

      const reuse = await refreshWith(t, login.refresh_token);
      const newestRefresh = await refreshWith(t, rotated.body.refresh_token);
      const newestAccess = await callProtected(t, rotated.body.access_token);
      const firstAccess = await callProtected(t, login.access_token);

      expectError(reuse, 401, 'Unauthorized');
      expectError(newestRefresh, 401, 'Unauthorized');
      expectInvalidToken(newestAccess);
      expectInvalidToken(firstAccess);
    });

    it('when one session is revoked for reuse, then another session of the same user is unaffected', async () => {
      const victim = await loginAs(t, user);
      const other = await loginAs(t, user);
      await refreshWith(t, victim.refresh_token);

      await refreshWith(t, victim.refresh_token);
      const otherAccess = await callProtected(t, other.access_token);
      const otherRefresh = await refreshWith(t, other.refresh_token);

      expect(otherAccess.status).toBe(200);
      expect(otherRefresh.status).toBe(200);
    });

    it('when 30 sessions refresh at once, then each gets new tokens for its own session, and each new refresh token works once more', async () => {
      const logins = await Promise.all(Array.from({ length: 30 }, () => loginAs(t, user)));

      const results = await Promise.all(logins.map((login) => refreshWith(t, login.refresh_token)));

      results.forEach((res) => expectTokenResponse(res, { accessTtl: 300 }));
      expect(results.map((res) => res.body['session-state'])).toEqual(logins.map((login) => login['session-state']));
      const again = await Promise.all(results.map((res) => refreshWith(t, res.body.refresh_token)));
      expect(again.map((res) => res.status)).toEqual(results.map(() => 200));
    });

    it('when 20 refreshes with one token run concurrently, then exactly one succeeds and the rest get 401', async () => {
      const login = await loginAs(t, user);

      const results = await Promise.all(Array.from({ length: 20 }, () => refreshWith(t, login.refresh_token)));

      const statuses = results.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 401)).toHaveLength(19);
      const winner = results.find((r) => r.status === 200)!;
      expect(winner.body['session-state']).toBe(login['session-state']);
      for (const loser of results.filter((r) => r.status !== 200)) expectError(loser, 401, 'Unauthorized');
    });
  });

  describe('tokens that are not a live refresh token (401) and malformed requests (400)', () => {
    it('when an access token is sent as refresh_token, then 401', async () => {
      const login = await loginAs(t, user);

      const res = await refreshWith(t, login.access_token);

      expectError(res, 401, 'Unauthorized');
      expect((await refreshWith(t, login.refresh_token)).status).toBe(200);
    });

    it('when an ID token is sent as refresh_token, then 401', async () => {
      const login = await loginAs(t, user);

      const res = await refreshWith(t, login.id_token);

      expectError(res, 401, 'Unauthorized');
      expect((await refreshWith(t, login.refresh_token)).status).toBe(200);
    });

    it.each([
      ['garbage', 'garbage.not-a.jwt'],
      ['an empty string', ''],
    ])('when refresh_token is %s, then 401', async (_label, refreshToken) => {
      const res = await refreshWith(t, refreshToken);

      expectError(res, 401, 'Unauthorized');
    });

    it('when the refresh token’s claims are altered under the original signature, then 401', async () => {
      const login = await loginAs(t, user);
      const [header, , signature] = login.refresh_token.split('.');
      const forged = Buffer.from(JSON.stringify({ ...claimsOf(login.refresh_token), sub: 'someone-else' })).toString('base64url');

      const res = await refreshWith(t, `${header}.${forged}.${signature}`);

      expectError(res, 401, 'Unauthorized');
    });

    it('when a refresh token is re-signed HS256 with another secret, or given another algorithm, then 401', async () => {
      const login = await loginAs(t, user);
      const [, payload] = login.refresh_token.split('.');
      const header = (fields: object) => Buffer.from(JSON.stringify({ typ: 'JWT', ...fields })).toString('base64url');
      const hs256 = (secret: string | Buffer, signingInput: string) => createHmac('sha256', secret).update(signingInput).digest('base64url');
      // The secret an attacker might try: the master key itself, or a published public key (algorithm confusion).
      const jwk = JSON.stringify((await t.http().get(PATHS.jwks)).body.keys[0]);
      const forgeries = [
        ...[t.masterKey, jwk, 'secret'].map((secret) => {
          const signingInput = `${header({ alg: 'HS256' })}.${payload}`;
          return `${signingInput}.${hs256(secret, signingInput)}`;
        }),
        `${header({ alg: 'none' })}.${payload}.`,
        `${header({ alg: 'HS512' })}.${payload}.${login.refresh_token.split('.')[2]}`,
      ];

      const responses = await Promise.all(forgeries.map((forged) => refreshWith(t, forged)));

      responses.forEach((res) => expectError(res, 401, 'Unauthorized'));
      expect((await refreshWith(t, login.refresh_token)).status).toBe(200);
    });

    it('when the refresh_token field is missing, then 400', async () => {
      const res = await t.http().post(PATHS.refresh).type('form').send({});

      expectError(res, 400, 'BadRequest');
    });

    it('when the content type is text/plain, then 415', async () => {
      const login = await loginAs(t, user);

      const res = await t.http().post(PATHS.refresh).set('Content-Type', 'text/plain').send(login.refresh_token);

      expectError(res, 415, 'UnsupportedMediaType');
    });

    it('when the user was disabled since login, then refreshing is 401', async () => {
      const doomed = await createUser(t, { role: 'viewer' });
      const login = await loginAs(t, doomed);
      await t.services.users.disable(doomed.username, CLI_CONTEXT);

      const res = await refreshWith(t, login.refresh_token);

      expectError(res, 401, 'Unauthorized');
    });

    itWithConcurrentConnections()('when the session is revoked by a transaction that commits while the refresh waits for it, then 401 and the refresh token is not rotated', async () => {
      const login = await loginAs(t, user);
      const sessionId = login['session-state'];
      const other = new Client({ connectionString: t.config.databaseUrl });
      await other.connect();
      let refresh: Promise<Response> | undefined;
      try {
        await other.query('BEGIN');
        await other.query("UPDATE sessions SET revoked_at = now(), revoked_reason = 'logout' WHERE id = $1", [sessionId]);
        // A supertest request goes out once it is awaited or then'd: then() sends it now.
        refresh = refreshWith(t, login.refresh_token).then((res) => res);
        await waitUntilSomeoneWaitsFor(other);
        await other.query('COMMIT');
      } catch (err) {
        await other.query('ROLLBACK');
        throw err;
      } finally {
        await other.end();
      }

      expectError(await refresh!, 401, 'Unauthorized');
      const { rows } = await t.db.query<{ refresh_jti: string }>('SELECT refresh_jti FROM sessions WHERE id = $1', [sessionId]);
      expect(rows[0]!.refresh_jti).toBe(claimsOf(login.refresh_token).jti);
    });
  });
});

/** Resolves once another backend is blocked by `holder` (the service's statement waiting for its row). */
async function waitUntilSomeoneWaitsFor(holder: Client): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await holder.query<{ waiting: number }>(
      'SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE pg_backend_pid() = ANY (pg_blocking_pids(pid))',
    );
    if (rows[0]!.waiting > 0) return;
    await sleep(25);
  }
  throw new Error('no statement came to wait for the lock');
}

describe('refresh token lifetimes', () => {
  let t: TestApp;
  let user: TestUser;
  // Tokens carry whole seconds, so one issued late in a second lives as little as TTL - 1 seconds:
  // the control below must still be fresh after a login and two refreshes on a loaded machine.
  const REFRESH_TOKEN_TTL = 5;

  beforeAll(async () => {
    t = await startTestApp({ ACCESS_TOKEN_TTL: '1', REFRESH_TOKEN_TTL: String(REFRESH_TOKEN_TTL), SESSION_MAX_TTL: '60' });
    user = await createUser(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  it('when the refresh token has expired, then 401 (while a fresh one from the same user still works)', async () => {
    const stale = await loginAs(t, user);
    await sleep((REFRESH_TOKEN_TTL + 1) * 1000 + 500);
    const fresh = await loginAs(t, user);

    const expired = await refreshWith(t, stale.refresh_token);
    const control = await refreshWith(t, fresh.refresh_token);

    expectError(expired, 401, 'Unauthorized');
    expect(control.status).toBe(200);
  });
});

describe('session absolute end (SESSION_MAX_TTL)', () => {
  let t: TestApp;
  let user: TestUser;
  // Whole seconds, floored: a token can lose up to a second at issue, so the margins below are wide
  // enough for a loaded machine (PGlite, parallel suites).
  const REFRESH_TOKEN_TTL = 8;
  const SESSION_MAX_TTL = 10;

  beforeAll(async () => {
    t = await startTestApp({
      ACCESS_TOKEN_TTL: '2',
      REFRESH_TOKEN_TTL: String(REFRESH_TOKEN_TTL),
      SESSION_MAX_TTL: String(SESSION_MAX_TTL),
    });
    user = await createUser(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  it('when a refresh happens near the session end, then refresh_expires_in is cut to what is left of the session and the session ends on time', async () => {
    const login = await loginAs(t, user);
    await sleep(5000);

    const rotated = await refreshWith(t, login.refresh_token);

    expect(rotated.status).toBe(200);
    // About 5 s of the 10 s session are left; an uncapped refresh token would live 8 s.
    expect(rotated.body.refresh_expires_in).toBeLessThanOrEqual(SESSION_MAX_TTL - 4);

    await sleep(6000);
    const afterEnd = await refreshWith(t, rotated.body.refresh_token);
    expectError(afterEnd, 401, 'Unauthorized');
  });
});
