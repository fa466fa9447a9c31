import { runMaintenance } from '../../../src/maintenance';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey } from '../../helpers/factories';
import { sample, scrape } from '../metrics/support';
import { adminToken, createEndpoint, deliveriesOf, eventually, FAST_WEBHOOKS, startReceiver, WEBHOOKS, type Receiver } from './support';

describe('webhook metrics: deliveries by outcome', () => {
  let t: TestApp;
  let receiver: Receiver;
  let admin: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp({ ...FAST_WEBHOOKS, METRICS_ENABLED: 'true' });
    admin = await adminToken(t);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('when one message is delivered and another fails after its retries, then /metrics counts each attempt by outcome', async () => {
    const good = await createEndpoint(t, admin, { url: receiver.url, events: ['api_key.created'] });
    const bad = await createEndpoint(t, admin, { url: 'http://127.0.0.1:9/closed', events: ['api_key.created'] });

    await createApiKey(t);
    await eventually(
      async () => (await deliveriesOf(t, admin, good.id))[0]?.status === 'delivered' && (await deliveriesOf(t, admin, bad.id))[0]?.status === 'failed',
      8_000,
      'delivered and failed',
    );
    const text = await scrape(t);

    expect(sample(text, 'webhook_deliveries_total', { outcome: 'delivered' })).toBe(1);
    // The schedule is 0s,1s: two retries, then failed.
    expect(sample(text, 'webhook_deliveries_total', { outcome: 'retrying' })).toBe(2);
    expect(sample(text, 'webhook_deliveries_total', { outcome: 'failed' })).toBe(1);
    // Nothing is due any more: the next poll measures 0.
    await eventually(async () => sample(await scrape(t), 'webhook_oldest_due_delivery_age_seconds') === 0, 5_000, 'the gauge back at 0');
  });
});

describe('webhook metrics: the age of the oldest due message', () => {
  let t: TestApp;
  let stalled: Receiver;

  beforeAll(async () => {
    // A receiver that answers only after the test: the message stays due while its send hangs.
    stalled = await startReceiver(() => ({ delayMs: 20_000 }));
    t = await startTestApp({ WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_POLL_INTERVAL_MS: '100', WEBHOOK_TIMEOUT_MS: '15000', METRICS_ENABLED: 'true' });
  });
  afterAll(async () => {
    // The receiver first: its sockets closed, the hanging send ends at once and the service stops.
    await stalled?.close();
    await t?.close();
  });

  it('when a message has been due for a while, then the gauge shows how long; when its endpoint is disabled, then it no longer counts', async () => {
    const admin = await adminToken(t);
    const endpoint = await createEndpoint(t, admin, { url: stalled.url, events: ['user.deleted'] });
    await t.http().post(`${WEBHOOKS}/${endpoint.id}/test`).set(bearer(admin));
    await stalled.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const waiting = sample(await scrape(t), 'webhook_oldest_due_delivery_age_seconds');
    await t.http().put(`${WEBHOOKS}/${endpoint.id}`).set(bearer(admin)).send({ url: stalled.url, events: ['user.deleted'], enabled: false });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const disabled = sample(await scrape(t), 'webhook_oldest_due_delivery_age_seconds');

    expect(waiting).toBeGreaterThanOrEqual(1);
    expect(waiting).toBeLessThan(30);
    expect(disabled).toBe(0);
  });
});

describe('webhook pruning: finished messages past WEBHOOK_RETENTION_DAYS', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp({ ...FAST_WEBHOOKS, WEBHOOK_RETENTION_DAYS: '7' });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('when delivered, failed and pending messages are older than the retention, then a maintenance round deletes the finished ones only', async () => {
    const admin = await adminToken(t);
    const endpoint = await createEndpoint(t, admin, { url: receiver.url, events: ['api_key.created'] });
    for (let i = 0; i < 4; i++) await createApiKey(t);
    await eventually(async () => (await deliveriesOf(t, admin, endpoint.id)).filter((d) => d.status === 'delivered').length === 4, 5_000, 'delivered');
    const ids = (await deliveriesOf(t, admin, endpoint.id)).map((d) => d.id.slice(4).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5'));
    // Aged by hand: delivered and failed 8 days ago, pending (a retry a day away) for 8 days, delivered 6 days ago.
    const age = (id: string, set: string) => t.db.query(`UPDATE webhook_deliveries SET ${set} WHERE id = $1`, [id]);
    await age(ids[0]!, "created_at = now() - interval '8 days'");
    await age(ids[1]!, "created_at = now() - interval '8 days', status = 'failed', next_attempt_at = NULL");
    await age(ids[2]!, "created_at = now() - interval '8 days', status = 'pending', next_attempt_at = now() + interval '1 day'");
    await age(ids[3]!, "created_at = now() - interval '6 days'");

    const report = await runMaintenance(t.db, { intervalSeconds: 60, clockTolerance: 0, webhookRetentionDays: 7 });
    const left = await deliveriesOf(t, admin, endpoint.id);

    expect(report.batches.webhookDeliveries).toEqual([2]);
    expect(left.map((d) => d.id)).toEqual([ids[2], ids[3]].map((id) => `msg_${id!.replaceAll('-', '')}`).sort().reverse());
    expect(left.map((d) => d.status).sort()).toEqual(['delivered', 'pending']);
  });
});
