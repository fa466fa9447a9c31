import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { buildApp } from '../../../src/app';
import { NO_RATE_LIMITS } from '../../../src/http/rate-limits';
import { createServices } from '../../../src/services';
import { startTestApp, type TestApp } from '../../helpers/app';
import { onSharedServerOnly } from '../../helpers/database';
import { bearer, createUser, loginAs, type TestUser } from '../../helpers/factories';
import { signedByForeignKey } from '../../helpers/tokens';
import { sleep } from '../auth/support';

const RELOAD_COOLDOWN_MS = 10_000;

/**
 * How many times the service has read the signing_keys table, as PostgreSQL counts it. The service
 * runs with one pooled connection, whose statistics PostgreSQL publishes when it ends a statement
 * at least a second after it last published them: hence the pause and the statement (GET /readyz)
 * before reading them.
 */
async function signingKeyReads(t: TestApp): Promise<number> {
  await sleep(1_100);
  await t.http().get('/readyz').expect(200);
  const { rows } = await t.db.query<{ reads: string }>(
    "SELECT seq_scan + COALESCE(idx_scan, 0) AS reads FROM pg_stat_user_tables WHERE relid = 'signing_keys'::regclass",
  );
  return Number(rows[0]!.reads);
}

// pg_stat_user_tables is the PostgreSQL server's; PGlite keeps no such statistics.
onSharedServerOnly()('signing keys under tokens with unknown kids (Hardening: bearer routes under attack)', () => {
  let t: TestApp;
  let user: TestUser;
  let valid: string;
  beforeAll(async () => {
    t = await startTestApp({ DATABASE_POOL_SIZE: '1' });
    user = await createUser(t, { role: 'viewer' });
    valid = (await loginAs(t, user)).access_token;
  });
  afterAll(() => t.close());

  it('when 20 tokens with unknown kids arrive, then each is 401 and the signing keys are read from the database at most once', async () => {
    const before = await signingKeyReads(t);
    const started = Date.now();

    for (let i = 0; i < 20; i++) {
      const res = await t.http().get('/api/v1/api-keys').set(bearer(signedByForeignKey(valid, randomBytes(16).toString('base64url'))));
      expect(res.status).toBe(401);
    }

    expect(Date.now() - started).toBeLessThan(RELOAD_COOLDOWN_MS);
    expect((await signingKeyReads(t)) - before).toBeLessThanOrEqual(1);
  });

  it('when another instance rotates the keys during that pause, then a token signed with the new key is accepted within 10 seconds', async () => {
    const services = createServices(t.config, t.db, t.masterKey);
    await services.signingKeys.initialise();
    const otherInstance = buildApp({ config: t.config, logger: t.logger, services, rateLimits: NO_RATE_LIMITS });
    await t.http().get('/api/v1/api-keys').set(bearer(signedByForeignKey(valid, randomBytes(16).toString('base64url')))).expect(401);
    const unknownKidAt = Date.now();
    await services.signingKeys.rotate();
    const login = await request(otherInstance).post('/api/auth/bearer/token').type('form').send(user).expect(200);

    let status = 0;
    while (Date.now() - unknownKidAt < RELOAD_COOLDOWN_MS + 2_000) {
      status = (await t.http().get('/api/v1/api-keys').set(bearer(login.body.access_token as string))).status;
      if (status === 200) break;
      await sleep(250);
    }

    expect(status).toBe(200);
    expect(Date.now() - unknownKidAt).toBeLessThanOrEqual(RELOAD_COOLDOWN_MS + 1_000);
  });
});
