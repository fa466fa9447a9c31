import { createHash } from 'node:crypto';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, randomName } from '../../helpers/factories';
import { adminToken, createEndpoint, FAST_WEBHOOKS, startReceiver, type Receiver } from '../webhooks/support';
import { KeyListServer, newSigningKey, signatureOf } from './github-keys-server';

/** Contract, "Events out: webhooks": every audit event type can be subscribed to, the two of leaks and imports included. */
describe('webhooks: api_key.imported and api_key.leaked are delivered like every audit event', () => {
  const list = new KeyListServer();
  const github = newSigningKey('github-key-1');
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    list.keys = [github];
    t = await startTestApp({ ...FAST_WEBHOOKS, SECRET_SCANNING_KEYS_URL: await list.start() });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
    await list.stop();
  });

  it('when an endpoint subscribes to both, then an import and a leak report reach it, and nothing else does', async () => {
    const admin = await adminToken(t);
    await createEndpoint(t, admin, { url: receiver.url, events: ['api_key.imported', 'api_key.leaked'] });
    const imported = randomName('imp');
    const leaked = await createApiKey(t);

    const importRes = await t
      .http()
      .post('/api/v1/api-keys/import')
      .set(bearer(admin))
      .send({ keys: [{ appname: imported, roles: [], digest: createHash('sha256').update('legacy-secret-for-webhooks').digest('hex') }] });
    const body = JSON.stringify([{ token: leaked.appkey, type: 'ak_api_key', url: 'https://github.com/o/r', source: 'content' }]);
    const reportRes = await t
      .http()
      .post('/api/v1/secret-scanning/github')
      .set('Content-Type', 'application/json')
      .set('Github-Public-Key-Identifier', github.identifier)
      .set('Github-Public-Key-Signature', signatureOf(github, body))
      .send(body);
    const got = await receiver.waitFor(2);

    expect([importRes.status, reportRes.status]).toEqual([201, 200]);
    const messages = got.map((r) => ({ type: r.json.type, appname: r.json.data.appname }));
    expect(messages).toEqual(
      expect.arrayContaining([
        { type: 'api_key.imported', appname: imported },
        { type: 'api_key.leaked', appname: leaked.appname },
      ]),
    );
    expect(messages).toHaveLength(2);
  });
});
