import { startTestApp, type TestApp } from '../helpers/app';
import { bearer, createApiKey, loginWithApiKey, tokenForRole } from '../helpers/factories';
import { expectMissingToken } from '../helpers/errors';

describe('smoke: the whole path', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('when an admin creates a key and the key logs in, then the key can read itself', async () => {
    const key = await createApiKey(t, { role: 'viewer' });

    const tokens = await loginWithApiKey(t, key);
    const res = await t.http().get(`/api/v1/api-keys/${key.appname}`).set(bearer(tokens.access_token));

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      meta: { code: 200, count: 1 },
      data: {
        appname: key.appname,
        description: 'test key',
        roles: ['viewer'],
        last_login: expect.any(Number),
        last_ip: '127.0.0.1',
      },
    });
  });

  it('when no token is sent, then 401 with the uniform body', async () => {
    const res = await t.http().get('/api/v1/api-keys');

    expectMissingToken(res);
  });

  it('when an admin lists keys, then the envelope counts them', async () => {
    const admin = await tokenForRole(t, 'admin');
    const res = await t.http().get('/api/v1/api-keys').set(bearer(admin));
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ code: 200, count: res.body.data.length });
  });
});
