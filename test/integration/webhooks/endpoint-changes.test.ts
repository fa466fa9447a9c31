import { Webhook } from 'standardwebhooks';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer } from '../../helpers/factories';
import { adminToken, createEndpoint, deliveriesOf, startReceiver, WEBHOOKS, type Receiver, type Received } from './support';

/** The dispatcher reads (and sends) an endpoint's messages a hundred at a time. */
const BATCH = 100;

const headersOf = (r: Received) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

describe('webhook endpoint changes while its messages are being sent: seen from the next batch', () => {
  let t: TestApp;
  let admin: string;
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    // The app's own dispatcher polls once a minute: each test runs one of its own, whose lease it holds throughout.
    t = await startTestApp({ WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_POLL_INTERVAL_MS: '60000' });
    admin = await adminToken(t);
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await t?.close();
  });

  /**
   * Queues one message more than a batch, then delivers them in one lease: the receiver holds its
   * first answer until `change` has run, so the change lands while the first batch is being sent.
   */
  async function deliverAcrossAChange(r: Receiver, endpointId: string, change: () => Promise<void>): Promise<void> {
    for (let i = 0; i <= BATCH; i++) expect((await t.http().post(`${WEBHOOKS}/${endpointId}/test`).set(bearer(admin))).status).toBe(202);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    r.answer = () => ({ after: held });
    const dispatcher = t.services.webhooks.dispatcher(t.logger);

    const run = dispatcher.runOnce();
    await r.waitFor(1);
    await change();
    release();
    await run;
    await dispatcher.stop();
  }

  it('when the secret is rotated during a lease, then the next batch is signed with both secrets', async () => {
    const r = await receiver();
    const endpoint = await createEndpoint(t, admin, { url: r.url, events: ['user.deleted'] });
    let newSecret = '';

    await deliverAcrossAChange(r, endpoint.id, async () => {
      newSecret = (await t.http().post(`${WEBHOOKS}/${endpoint.id}/rotate-secret`).set(bearer(admin))).body.data.secret as string;
    });

    expect(r.received.length).toBe(BATCH + 1);
    // The batch read before the rotation goes out as it was read.
    expect(String(r.received[BATCH - 1]!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    const next = r.received[BATCH]!;
    expect(String(next.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(() => new Webhook(newSecret).verify(next.body, headersOf(next))).not.toThrow();
    expect(() => new Webhook(endpoint.secret).verify(next.body, headersOf(next))).not.toThrow();
  });

  it('when the endpoint is disabled during a lease, then the next batch is not sent and stays pending', async () => {
    const r = await receiver();
    const endpoint = await createEndpoint(t, admin, { url: r.url, events: ['user.deleted'] });

    await deliverAcrossAChange(r, endpoint.id, async () => {
      const put = await t.http().put(`${WEBHOOKS}/${endpoint.id}`).set(bearer(admin)).send({ url: r.url, events: ['user.deleted'], enabled: false });
      expect(put.status).toBe(200);
    });
    await new Promise((resolve) => setTimeout(resolve, 300));

    expect(r.received.length).toBe(BATCH);
    expect(await deliveriesOf(t, admin, endpoint.id, { status: 'pending' })).toEqual([expect.objectContaining({ attempts: 0 })]);
  });

  it('when the URL is replaced during a lease, then the next batch goes to the new URL', async () => {
    const before = await receiver();
    const after = await receiver();
    const endpoint = await createEndpoint(t, admin, { url: before.url, events: ['user.deleted'] });

    await deliverAcrossAChange(before, endpoint.id, async () => {
      const put = await t.http().put(`${WEBHOOKS}/${endpoint.id}`).set(bearer(admin)).send({ url: after.url, events: ['user.deleted'] });
      expect(put.status).toBe(200);
    });

    expect(before.received.length).toBe(BATCH);
    expect(after.received.length).toBe(1);
    expect(after.received[0]!.headers['webhook-id']).toBe((await deliveriesOf(t, admin, endpoint.id, { limit: '1' }))[0]!.id);
  });
});
