import { startTestApp, type TestApp } from '../../helpers/app';
import { expectError, expectOAuthError } from '../../helpers/errors';
import { bearer, createApiKey, createUser, randomName, tokenForRole, type TestApiKey, type TestUser } from '../../helpers/factories';

/**
 * Contract, "Bad input stays 400": a NUL or an unpaired surrogate in any string of a query or body
 * is a 400 naming the field, never a 500 and never stored altered (an unpaired surrogate would go
 * into the database as U+FFFD); on the token routes a string holding one is no credential at all.
 */
const BAD = [
  ['a NUL', 'a\u0000b'],
  ['an unpaired high surrogate', 'a\ud800b'],
  ['an unpaired low surrogate', '\udc00'],
] as const;

describe('bad input stays 400', () => {
  let t: TestApp;
  let admin: string;
  let user: TestUser;
  let key: TestApiKey;
  let eventsBefore: number;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await tokenForRole(t, 'admin');
    user = await createUser(t, { role: 'viewer' });
    key = await createApiKey(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  const countEvents = async () => Number((await t.db.query<{ n: string }>('SELECT count(*) AS n FROM audit_events')).rows[0]!.n);
  beforeEach(async () => {
    eventsBefore = await countEvents();
  });
  afterEach(async () => {
    // Refused before anything was looked at: not even a login.failed.
    expect(await countEvents()).toBe(eventsBefore);
  });

  describe.each(BAD)('a string holding %s', (_label, bad) => {
    it('when it is the jwt of the API-key token route, then 400 naming body.jwt', async () => {
      const res = await t.http().post('/api/v1/auth/token').send({ jwt: bad });

      expectError(res, 400, 'BadRequest', /^body\.jwt: /);
    });

    it('when it is the username or password of the password route, then 400 naming the field', async () => {
      const username = await t.http().post('/api/auth/bearer/token').send({ username: bad, password: user.password });
      const password = await t.http().post('/api/auth/bearer/token').send({ username: user.username, password: bad });

      expectError(username, 400, 'BadRequest', /^body\.username: /);
      expectError(password, 400, 'BadRequest', /^body\.password: /);
    });

    it('when it is the refresh_token of the refresh route, then 400 naming body.refresh_token', async () => {
      const res = await t.http().post('/api/auth/bearer/refresh').send({ refresh_token: bad });

      expectError(res, 400, 'BadRequest', /^body\.refresh_token: /);
    });

    it('when it is a key description (create or update), then 400 naming body.description and nothing is stored', async () => {
      const appname = randomName('bad');
      const created = await t.http().post('/api/v1/api-keys').set(bearer(admin)).send({ appname, description: bad, roles: ['viewer'] });
      const updated = await t.http().put(`/api/v1/api-keys/${key.appname}`).set(bearer(admin)).send({ description: bad, roles: ['viewer'] });
      const read = await t.http().get(`/api/v1/api-keys/${key.appname}`).set(bearer(admin));

      expectError(created, 400, 'BadRequest', /^body\.description: /);
      expectError(updated, 400, 'BadRequest', /^body\.description: /);
      expect((await t.http().get(`/api/v1/api-keys/${appname}`).set(bearer(admin))).status).toBe(404);
      expect(read.body.data.description).toBe('test key');
    });

    it('when it is a role in the list, then 400 naming body.roles.0', async () => {
      const res = await t.http().post('/api/v1/api-keys').set(bearer(admin)).send({ appname: randomName('bad'), roles: [bad] });

      expectError(res, 400, 'BadRequest', /^body\.roles\.0: /);
    });

    it('when it is a parameter of the OAuth token endpoint, then invalid_request naming it', async () => {
      const res = await t.http().post('/oauth2/token').send({ grant_type: 'password', username: bad, password: user.password });

      expectOAuthError(res, 400, 'invalid_request', { message: /username/ });
    });

    it('when it is the token to revoke or introspect, then 400 naming body.token', async () => {
      const revoked = await t.http().post('/api/auth/bearer/revoke').send({ token: bad });
      const introspected = await t.http().post('/api/auth/bearer/introspect').set(bearer(admin)).send({ token: bad });

      expectError(revoked, 400, 'BadRequest', /^body\.token: /);
      expectError(introspected, 400, 'BadRequest', /^body\.token: /);
    });
  });

  // A form carries UTF-8, which cannot hold an unpaired surrogate (it arrives as U+FFFD): NUL is what a form can carry.
  it('when a form field of the password route holds NUL, then 400 naming it', async () => {
    const res = await t.http().post('/api/auth/bearer/token').type('form').send({ username: user.username, password: 'a\u0000b' });

    expectError(res, 400, 'BadRequest', /^body\.password: /);
  });

  it('when a query parameter holds NUL, then 400 naming it', async () => {
    const res = await t.http().get('/api/v1/audit-events?actor=a%00b').set(bearer(admin));

    expectError(res, 400, 'BadRequest', /^query\.actor: /);
  });

  it('when a string deep in an unknown field holds NUL, then 400 naming its path', async () => {
    const res = await t.http().post('/api/v1/api-keys').set(bearer(admin)).send({ appname: randomName('bad'), roles: [], extra: { list: ['ok', 'a\u0000'] } });

    expectError(res, 400, 'BadRequest', /^body\.extra\.list\.1: /);
  });

  // 64 KiB of nested arrays is 30,000 levels: the walk that looks for NUL must stay linear, or one
  // unauthenticated request holds the server for minutes (the test would time out long before).
  it('when a token route gets a body nested 30,000 deep, then 400 for the field, the string inside named by its path', async () => {
    const depth = 30_000;
    const body = `{"username":${'['.repeat(depth)}"a\\u0000"${']'.repeat(depth)},"password":"x"}`;

    const res = await t.http().post('/api/auth/bearer/token').set('Content-Type', 'application/json').send(body);

    expectError(res, 400, 'BadRequest', `body.username.${'0.'.repeat(15)}… (30001 deep): must not contain NUL`);
  });
});

