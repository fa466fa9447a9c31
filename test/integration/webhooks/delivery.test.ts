import { Webhook } from 'standardwebhooks';
import { recordAuditEvent } from '../../../src/audit-trail/audit-trail';
import type { Queryable } from '../../../src/db/database';
import type { AuditContext } from '../../../src/shared/audit-context';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey } from '../../helpers/factories';
import { adminToken, createEndpoint, deliveriesOf, eventually, FAST_WEBHOOKS, startReceiver, WEBHOOKS, type Receiver, type Received } from './support';

const headersOf = (r: Received) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

describe('webhook delivery: signed messages, retries, redirects, order', () => {
  let t: TestApp;
  let admin: string;
  const receivers: Receiver[] = [];
  const receiver = async (answer?: Receiver['answer']) => {
    const r = await startReceiver(answer);
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    t = await startTestApp(FAST_WEBHOOKS);
    admin = await adminToken(t);
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await t?.close();
  });

  it('when an event happens, then the endpoint gets it signed as Standard Webhooks say, and the standardwebhooks library verifies it', async () => {
    const r = await receiver();
    const endpoint = await createEndpoint(t, admin, { url: r.url, events: ['api_key.created'] });

    const key = await createApiKey(t);
    const [got] = await r.waitFor(1);

    const verified = new Webhook(endpoint.secret).verify(got!.body, headersOf(got!)) as Received['json'];
    expect(verified.type).toBe('api_key.created');
    expect(verified.data.appname).toBe(key.appname);
    expect(got!.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(Math.abs(Number(got!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    expect(got!.headers['content-type']).toBe('application/json');
    const events = await t.http().get('/api/v1/audit-events').query({ appname: key.appname, type: 'api_key.created' }).set(bearer(admin));
    expect(verified.data).toEqual(events.body.data[0]);
    expect(verified.timestamp).toBe(events.body.data[0].occurred_at);
    await eventually(async () => (await deliveriesOf(t, admin, endpoint.id))[0]?.status === 'delivered', 5_000, 'delivered in the log');
    const [logged] = await deliveriesOf(t, admin, endpoint.id);
    expect(logged).toMatchObject({ id: got!.headers['webhook-id'], type: 'api_key.created', status: 'delivered', attempts: 1, last_status_code: 200, next_attempt_at: null });
  });

  it('when a message is verified with another secret or a changed body, then the library refuses it', async () => {
    const r = await receiver();
    await createEndpoint(t, admin, { url: r.url, events: ['api_key.created'] });
    const other = await createEndpoint(t, admin, { url: 'http://127.0.0.1:9/never', events: ['user.deleted'] });

    await createApiKey(t);
    const [got] = await r.waitFor(1);

    expect(() => new Webhook(other.secret).verify(got!.body, headersOf(got!))).toThrow();
    expect(() => new Webhook(other.secret).verify(got!.body.replace('api_key.created', 'api_key.deleted'), headersOf(got!))).toThrow();
  });

  it('when an endpoint subscribes to one type, then it gets that type and nothing else', async () => {
    const r = await receiver();
    await createEndpoint(t, admin, { url: r.url, events: ['api_key.deleted'] });

    const key = await createApiKey(t);
    await t.http().delete(`/api/v1/api-keys/${key.appname}`).set(bearer(admin));
    await r.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 500));

    expect(r.received.map((g) => g.json.type)).toEqual(['api_key.deleted']);
  });

  it('when the receiver answers 500 twice, then the message is retried by the schedule and delivered at the third attempt, with the same id and body', async () => {
    let calls = 0;
    const r = await receiver(() => ({ status: ++calls <= 2 ? 500 : 204 }));
    const endpoint = await createEndpoint(t, admin, { url: r.url, events: ['api_key.created'] });

    await createApiKey(t);
    const got = await r.waitFor(3);

    expect(new Set(got.map((g) => g.headers['webhook-id'])).size).toBe(1);
    expect(new Set(got.map((g) => g.body)).size).toBe(1);
    // The schedule is 0s,1s: the third attempt waits a second after the second.
    expect(got[2]!.at - got[1]!.at).toBeGreaterThanOrEqual(900);
    await eventually(async () => (await deliveriesOf(t, admin, endpoint.id))[0]?.status === 'delivered', 5_000, 'delivered');
    expect((await deliveriesOf(t, admin, endpoint.id))[0]).toMatchObject({ attempts: 3, last_status_code: 204, last_error: null });
  });

  it('when the receiver always answers 500, then after the last retry the message is failed and not sent again', async () => {
    const r = await receiver(() => ({ status: 500 }));
    const endpoint = await createEndpoint(t, admin, { url: r.url, events: ['api_key.created'] });

    await createApiKey(t);
    await r.waitFor(3);
    await eventually(async () => (await deliveriesOf(t, admin, endpoint.id))[0]?.status === 'failed', 5_000, 'failed');
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    expect(r.received).toHaveLength(3);
    expect((await deliveriesOf(t, admin, endpoint.id))[0]).toMatchObject({ status: 'failed', attempts: 3, last_status_code: 500, last_error: 'non_2xx', next_attempt_at: null });
  });

  it('when the receiver answers after the timeout, then the attempt counts as failed and is retried', async () => {
    let calls = 0;
    const r = await receiver(() => ({ delayMs: ++calls === 1 ? 2_000 : 0 }));
    const endpoint = await createEndpoint(t, admin, { url: r.url, events: ['api_key.created'] });

    await createApiKey(t);
    await r.waitFor(2);
    await eventually(async () => (await deliveriesOf(t, admin, endpoint.id))[0]?.status === 'delivered', 8_000, 'delivered');

    const [logged] = await deliveriesOf(t, admin, endpoint.id);
    expect(logged).toMatchObject({ attempts: 2, last_status_code: 200 });
  });

  it('when the receiver answers 200 but trickles its body for longer than the timeout, then the attempt ends within WEBHOOK_TIMEOUT_MS, delivered by its status (review finding)', async () => {
    const r = await receiver(() => ({ trickle: { everyMs: 300, bytes: 12 } }));
    const endpoint = await createEndpoint(t, admin, { url: r.url, events: ['api_key.created'] });

    await createApiKey(t);
    const [first] = await r.waitFor(1);
    await eventually(async () => (await deliveriesOf(t, admin, endpoint.id))[0]?.status === 'delivered', 8_000, 'delivered');

    // Recorded before the 3.6 s trickle ended: the 1 s deadline cut the body's reading short.
    expect(Date.now() - first!.at).toBeLessThan(2_500);
    expect((await deliveriesOf(t, admin, endpoint.id))[0]).toMatchObject({ attempts: 1, last_status_code: 200 });
  });

  it('when the connection fails (nothing listens, or the receiver drops it), then each attempt is a network error, retried, then failed', async () => {
    const dropping = await receiver(() => ({ drop: true }));
    const dropped = await createEndpoint(t, admin, { url: dropping.url, events: ['api_key.created'] });
    const closed = await createEndpoint(t, admin, { url: 'http://127.0.0.1:9/closed', events: ['api_key.created'] });

    await createApiKey(t);
    await eventually(
      async () => (await deliveriesOf(t, admin, dropped.id))[0]?.status === 'failed' && (await deliveriesOf(t, admin, closed.id))[0]?.status === 'failed',
      8_000,
      'both failed',
    );

    expect(dropping.received).toHaveLength(3);
    for (const id of [dropped.id, closed.id]) {
      expect((await deliveriesOf(t, admin, id))[0]).toMatchObject({ status: 'failed', attempts: 3, last_status_code: null, last_error: 'network_error' });
    }
  });

  it('when the receiver answers with a redirect, then it is not followed: the target gets nothing and the attempt counts as failed', async () => {
    const target = await receiver();
    const r = await receiver(() => ({ status: 307, headers: { location: target.url } }));
    const endpoint = await createEndpoint(t, admin, { url: r.url, events: ['api_key.created'] });

    await createApiKey(t);
    await r.waitFor(3);
    await eventually(async () => (await deliveriesOf(t, admin, endpoint.id))[0]?.status === 'failed', 5_000, 'failed');

    expect(target.received).toHaveLength(0);
    expect((await deliveriesOf(t, admin, endpoint.id))[0]).toMatchObject({ last_status_code: 307, last_error: 'non_2xx' });
  });

  it('when events happen while an endpoint is disabled, then they are never sent to it, not even after it is enabled again', async () => {
    const r = await receiver();
    const endpoint = await createEndpoint(t, admin, { url: r.url, events: ['api_key.created'] });
    const put = (enabled: boolean) => t.http().put(`${WEBHOOKS}/${endpoint.id}`).set(bearer(admin)).send({ url: r.url, events: ['api_key.created'], enabled });

    expect((await put(false)).status).toBe(200);
    const whileDisabled = await createApiKey(t);
    expect((await put(true)).status).toBe(200);
    const afterwards = await createApiKey(t);
    await r.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 500));

    expect(r.received.map((g) => g.json.data.appname)).toEqual([afterwards.appname]);
    expect(r.received.map((g) => g.json.data.appname)).not.toContain(whileDisabled.appname);
  });

  it('when the secret is rotated, then messages carry a signature by each secret, and a verifier with either accepts them', async () => {
    const r = await receiver();
    const endpoint = await createEndpoint(t, admin, { url: r.url, events: ['api_key.created'] });
    const rotated = await t.http().post(`${WEBHOOKS}/${endpoint.id}/rotate-secret`).set(bearer(admin));
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.data.secret as string;

    await createApiKey(t);
    const [got] = await r.waitFor(1);

    expect(newSecret).not.toBe(endpoint.secret);
    expect(String(got!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(() => new Webhook(newSecret).verify(got!.body, headersOf(got!))).not.toThrow();
    expect(() => new Webhook(endpoint.secret).verify(got!.body, headersOf(got!))).not.toThrow();
  });

  it("when the rotation's 24 hours are over, then messages carry the new secret's signature alone", async () => {
    const r = await receiver();
    const endpoint = await createEndpoint(t, admin, { url: r.url, events: ['api_key.created'] });
    const newSecret = (await t.http().post(`${WEBHOOKS}/${endpoint.id}/rotate-secret`).set(bearer(admin))).body.data.secret as string;
    await t.db.query(`UPDATE webhook_endpoints SET previous_secret_until = now() - interval '1 second' WHERE id = $1`, [endpoint.id]);

    await createApiKey(t);
    const [got] = await r.waitFor(1);

    expect(String(got!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() => new Webhook(newSecret).verify(got!.body, headersOf(got!))).not.toThrow();
    expect(() => new Webhook(endpoint.secret).verify(got!.body, headersOf(got!))).toThrow();
  });

  it('when an audit event is written in a transaction, then its message is written in it too: gone if it rolls back, sent if it commits', async () => {
    const r = await receiver();
    const endpoint = await createEndpoint(t, admin, { url: r.url, events: ['user.deleted'] });
    const ctx: AuditContext = { actor: 'system:outbox-test', clientAddress: null, requestId: null, route: null };
    const messagesOf = (q: Queryable, eventId: string) =>
      q
        .query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries WHERE audit_event_id = $1 AND endpoint_id = $2', [eventId, endpoint.id])
        .then((res) => res.rows[0]!.n);
    let inRolledBack = -1;

    await expect(
      t.db.withTransaction(async (tx) => {
        const eventId = await recordAuditEvent(tx, ctx, { type: 'user.deleted', username: 'rolled-back' });
        inRolledBack = await messagesOf(tx, eventId);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const committed = await t.db.withTransaction((tx) => recordAuditEvent(tx, ctx, { type: 'user.deleted', username: 'committed' }));
    const [got] = await r.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 300));

    expect(inRolledBack).toBe(1);
    expect(await messagesOf(t.db, committed)).toBe(1);
    expect(r.received.map((g) => g.json.data.username)).toEqual(['committed']);
    expect((await deliveriesOf(t, admin, endpoint.id)).map((d) => d.id)).toEqual([got!.headers['webhook-id']]);
  });

  it('when a test message is sent, then that endpoint alone gets webhook.tested, verifiable, and the answer is the queued message', async () => {
    const r = await receiver();
    const bystander = await receiver();
    const endpoint = await createEndpoint(t, admin, { url: r.url, events: ['user.deleted'] });
    await createEndpoint(t, admin, { url: bystander.url, events: ['*'] });

    const res = await t.http().post(`${WEBHOOKS}/${endpoint.id}/test`).set(bearer(admin));
    const [got] = await r.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 300));

    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({ type: 'webhook.tested', status: 'pending', attempts: 0 });
    expect(got!.headers['webhook-id']).toBe(res.body.data.id);
    expect((new Webhook(endpoint.secret).verify(got!.body, headersOf(got!)) as Received['json']).data.details).toMatchObject({ webhook_id: endpoint.id });
    expect(bystander.received.map((g) => g.json.type)).not.toContain('webhook.tested');
  });

  it('when many events happen, then one endpoint gets each exactly once, in the order of the events', async () => {
    // The first answer takes 700 ms (within the 1 s timeout), so the events of that while are sent
    // together; each then takes the receiver 0 to 40 ms: sent concurrently, they would be answered out of order.
    let first = true;
    const r = await receiver(() => {
      const delayMs = first ? 700 : Math.floor(Math.random() * 40);
      first = false;
      return { delayMs };
    });
    const endpoint = await createEndpoint(t, admin, { url: r.url, events: ['api_key.created'] });

    const keys = [];
    for (let i = 0; i < 20; i++) keys.push(await createApiKey(t));
    await r.waitFor(20);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const inEventOrder = keys.map((k) => k.appname);
    expect(r.received.map((g) => g.json.data.appname)).toEqual(inEventOrder);
    expect(r.answered.map((g) => g.json.data.appname)).toEqual(inEventOrder);
    expect(new Set(r.received.map((g) => g.headers['webhook-id'])).size).toBe(20);
    const log = await deliveriesOf(t, admin, endpoint.id);
    expect(log.every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
  });
});
