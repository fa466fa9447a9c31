import { startTestApp, type TestApp } from '../../helpers/app';
import { createApiKey } from '../../helpers/factories';
import { signRequestToken } from '../../helpers/tokens';
import { readKey } from './support';

describe('last_ip behind a trusted proxy (TRUST_PROXY=loopback)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'loopback' });
  });
  afterAll(() => t.close());

  it('when the exchange arrives through the trusted proxy, then last_ip is the client address it forwarded', async () => {
    const key = await createApiKey(t, { role: 'viewer' });

    await t
      .http()
      .post('/api/v1/auth/token')
      .set('X-Forwarded-For', '203.0.113.9')
      .send({ jwt: signRequestToken(key.appname, key.appkey) })
      .expect(200);

    expect((await readKey(t, key.appname)).body.data.last_ip).toBe('203.0.113.9');
  });
});
