import type { LookupAddress } from 'node:dns';
import { SecretBox } from '../../../src/crypto/secretbox';
import { API_SCOPES, type Principal } from '../../../src/shared/principals';
import { WebhooksService } from '../../../src/webhooks/webhooks.service';
import { isPublicAddress } from '../../../src/webhooks/address-rules';
import { startTestApp, type TestApp } from '../../helpers/app';
import { expectError } from '../../helpers/errors';
import { bearer, tokenForRole } from '../../helpers/factories';
import { adminToken, deliveriesOf, startReceiver, WEBHOOKS, type Receiver } from './support';

const ADMIN: Principal = { type: 'user', id: 'test', name: 'address-rules', role: 'admin', sessionId: 'test', scopes: API_SCOPES };
const EDITOR: Principal = { ...ADMIN, role: 'editor' };
const ORIGIN = { clientAddress: null, requestId: null, route: null };

describe('webhook addresses: https and public addresses only, checked at registration and at delivery', () => {
  let t: TestApp;
  let admin: string;
  let receiver: Receiver;

  beforeAll(async () => {
    // The app's own dispatcher polls once a minute: the delivery tests below run one of their own.
    t = await startTestApp({ WEBHOOK_POLL_INTERVAL_MS: '60000', WEBHOOK_RETRY_SCHEDULE: '0s', WEBHOOK_TIMEOUT_MS: '1000' });
    admin = await adminToken(t);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  /** The service and dispatcher of this app, resolving names through `resolve` instead of the system's resolver. */
  const withResolver = (resolve: (host: string) => Promise<LookupAddress[]>, allowInsecure = false, retryScheduleMs = t.config.webhooks.retryScheduleMs) => {
    const service = new WebhooksService(t.db, new SecretBox(t.masterKey), { ...t.config.webhooks, allowInsecure, retryScheduleMs }, resolve);
    return { service, dispatcher: service.dispatcher(t.logger) };
  };

  /**
   * A round, then another once a retry 300 ms later is due (the first round sees the message not yet
   * due again, and stops); the message's log row after the first round.
   */
  const aroundRetry = async (dispatcher: ReturnType<typeof withResolver>['dispatcher'], webhookId: string) => {
    await dispatcher.runOnce();
    const afterFirst = (await deliveriesOf(t, admin, webhookId))[0];
    await new Promise((resolve) => setTimeout(resolve, 400));
    await dispatcher.runOnce();
    await dispatcher.stop();
    return afterFirst;
  };

  it.each([
    ['http://203.0.114.1/hook', 'must be an https: URL'],
    ['https://127.0.0.1/hook', 'non-public address (127.0.0.1)'],
    ['https://10.1.2.3/hook', 'non-public address'],
    ['https://172.16.0.1/hook', 'non-public address'],
    ['https://192.168.1.1/hook', 'non-public address'],
    ['https://169.254.169.254/latest/meta-data', 'non-public address'],
    ['https://100.64.0.1/hook', 'non-public address'],
    ['https://0.0.0.0/hook', 'non-public address'],
    ['https://224.0.0.1/hook', 'non-public address'],
    ['https://192.0.2.10/hook', 'non-public address'],
    ['https://[::1]/hook', 'non-public address'],
    ['https://[::ffff:127.0.0.1]/hook', 'non-public address'],
    ['https://[::ffff:10.0.0.1]/hook', 'non-public address'],
    // IPv4-compatible (RFC 4291, deprecated): the URL parser writes them as [::7f00:1], [::a00:1].
    ['https://[::127.0.0.1]/hook', 'non-public address (::7f00:1)'],
    ['https://[::10.0.0.1]/hook', 'non-public address (::a00:1)'],
    ['https://[fd00::1]/hook', 'non-public address'],
    ['https://[fe80::1]/hook', 'non-public address'],
    ['https://[ff02::1]/hook', 'non-public address'],
    ['https://localhost/hook', 'resolves to a non-public address'],
  ])('when an endpoint at %s is registered without WEBHOOK_ALLOW_INSECURE, then 400 (%s) and nothing is created', async (url, message) => {
    const res = await t.http().post(WEBHOOKS).set(bearer(admin)).send({ url, events: ['user.deleted'] });

    expectError(res, 400, 'BadRequest', message);
    expect(res.body.message).toMatch(/^body\.url: /);
  });

  it('when a viewer registers an endpoint at a non-public address written in the URL, then 400 before the 403', async () => {
    const viewer = await tokenForRole(t, 'viewer');

    const res = await t.http().post(WEBHOOKS).set(bearer(viewer)).send({ url: 'https://10.1.2.3/hook', events: ['*'] });

    expectError(res, 400, 'BadRequest', 'body.url: must not point at a non-public address (10.1.2.3)');
  });

  it('when a caller who may not register endpoints names a host, then 403 and the name is never resolved', async () => {
    const asked: string[] = [];
    const { service } = withResolver(async (host) => {
      asked.push(host);
      return [{ address: '127.0.0.1', family: 4 }];
    });

    await expect(service.create(EDITOR, { url: 'https://hooks.example.test/hook', events: ['*'], description: '' }, ORIGIN)).rejects.toMatchObject({ status: 403 });
    expect(asked).toEqual([]);
  });

  it('when an endpoint at a public address is registered, then it is accepted (written as an address: no name to resolve here)', async () => {
    const res = await t.http().post(WEBHOOKS).set(bearer(admin)).send({ url: 'https://1.1.1.1/hook', events: ['user.deleted'] });

    expect(res.status).toBe(201);
    // Removed at once: nothing in these tests may ever be sent to a public address.
    expect((await t.http().delete(`${WEBHOOKS}/${res.body.data.id}`).set(bearer(admin))).status).toBe(204);
  });

  it('when a name resolves to a public address at registration and to a loopback one at delivery, then the message fails without a request', async () => {
    const answers: LookupAddress[][] = [[{ address: '1.1.1.1', family: 4 }]];
    const asked: string[] = [];
    const { service, dispatcher } = withResolver(async (host) => {
      asked.push(host);
      return answers.shift() ?? [{ address: '127.0.0.1', family: 4 }];
    });
    const { webhook } = await service.create(ADMIN, { url: `https://hooks.example.test:${receiver.port}/hook`, events: ['user.deleted'], description: '' }, ORIGIN);

    await service.sendTest(ADMIN, webhook.id, ORIGIN);
    await dispatcher.runOnce();
    await dispatcher.stop();

    expect(asked).toEqual(['hooks.example.test', 'hooks.example.test']);
    expect(receiver.received).toHaveLength(0);
    expect((await deliveriesOf(t, admin, webhook.id))[0]).toMatchObject({ type: 'webhook.tested', status: 'failed', attempts: 1, last_error: 'address_refused', last_status_code: null });
  });

  it('when the name server fails once at delivery, then the message stays pending as dns_failed and is delivered at the retry', async () => {
    const own = await startReceiver();
    let failures = 0;
    const { service, dispatcher } = withResolver(async () => {
      if (failures++ === 0) throw Object.assign(new Error('getaddrinfo EAI_AGAIN hooks.example.test'), { code: 'EAI_AGAIN' });
      return [{ address: '127.0.0.1', family: 4 }];
    }, true, [300]);
    const { webhook } = await service.create(ADMIN, { url: `http://hooks.example.test:${own.port}/hook`, events: ['user.deleted'], description: '' }, ORIGIN);
    await service.sendTest(ADMIN, webhook.id, ORIGIN);

    const afterFirst = await aroundRetry(dispatcher, webhook.id);
    await own.close();

    expect(afterFirst).toMatchObject({ status: 'pending', attempts: 1, last_error: 'dns_failed', last_status_code: null });
    expect(own.received.map((r) => r.json.data.details)).toEqual([expect.objectContaining({ webhook_id: webhook.id })]);
    expect((await deliveriesOf(t, admin, webhook.id))[0]).toMatchObject({ status: 'delivered', attempts: 2, last_error: null, last_status_code: 200 });
  });

  it('when the name server fails at delivery without WEBHOOK_ALLOW_INSECURE, then the attempt is retried, not refused; a private answer at the retry is refused', async () => {
    const answers: (() => LookupAddress[])[] = [
      () => [{ address: '1.1.1.1', family: 4 }],
      () => {
        throw Object.assign(new Error('queryA ESERVFAIL hooks.example.test'), { code: 'ESERVFAIL' });
      },
    ];
    const { service, dispatcher } = withResolver(async () => (answers.shift() ?? (() => [{ address: '127.0.0.1', family: 4 }]))(), false, [300]);
    const { webhook } = await service.create(ADMIN, { url: `https://hooks.example.test:${receiver.port}/hook`, events: ['user.deleted'], description: '' }, ORIGIN);
    await service.sendTest(ADMIN, webhook.id, ORIGIN);

    const afterFirst = await aroundRetry(dispatcher, webhook.id);

    expect(afterFirst).toMatchObject({ status: 'pending', attempts: 1, last_error: 'dns_failed' });
    expect(receiver.received).toHaveLength(0);
    expect((await deliveriesOf(t, admin, webhook.id))[0]).toMatchObject({ status: 'failed', attempts: 2, last_error: 'address_refused' });
  });

  it('when a name does not resolve at registration, then 400 naming body.url', async () => {
    const { service } = withResolver(async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example.test'), { code: 'ENOTFOUND' });
    });

    await expect(service.create(ADMIN, { url: 'https://nowhere.example.test/hook', events: ['*'], description: '' }, ORIGIN)).rejects.toMatchObject({
      status: 400,
      message: 'body.url: its host nowhere.example.test does not resolve',
    });
  });

  it('when a name resolves to a public and a private address at once, then it is refused', async () => {
    const { service } = withResolver(async () => [
      { address: '1.1.1.1', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ]);

    await expect(service.create(ADMIN, { url: 'https://mixed.example.test/hook', events: ['*'], description: '' }, ORIGIN)).rejects.toThrow(
      'resolves to a non-public address (10.0.0.7)',
    );
  });

  it('when an endpoint registered with WEBHOOK_ALLOW_INSECURE=true is delivered to without it, then its loopback URL is refused again, without a request', async () => {
    const insecure = withResolver(async () => [{ address: '127.0.0.1', family: 4 }], true);
    const secure = withResolver(async () => [{ address: '127.0.0.1', family: 4 }]);
    const { webhook } = await insecure.service.create(ADMIN, { url: receiver.url, events: ['user.deleted'], description: '' }, ORIGIN);

    await secure.service.sendTest(ADMIN, webhook.id, ORIGIN);
    await secure.dispatcher.runOnce();
    await Promise.all([secure.dispatcher.stop(), insecure.dispatcher.stop()]);

    expect(receiver.received).toHaveLength(0);
    expect((await deliveriesOf(t, admin, webhook.id))[0]).toMatchObject({ status: 'failed', last_error: 'address_refused' });
  });

  it('when WEBHOOK_ALLOW_INSECURE=true, then http:, loopback and private addresses are accepted and delivered to', async () => {
    const { service, dispatcher } = withResolver(async () => [{ address: '127.0.0.1', family: 4 }], true);
    const { webhook } = await service.create(ADMIN, { url: `http://localhost:${receiver.port}/hook`, events: ['user.deleted'], description: '' }, ORIGIN);
    const privateOne = await service.create(ADMIN, { url: 'http://10.0.0.1/hook', events: ['user.deleted'], description: '' }, ORIGIN);

    await service.sendTest(ADMIN, webhook.id, ORIGIN);
    await dispatcher.runOnce();
    await dispatcher.stop();

    expect(privateOne.webhook.url).toBe('http://10.0.0.1/hook');
    expect(receiver.received.map((r) => r.json.type)).toEqual(['webhook.tested']);
    // Never sent anything: the private address only had to be accepted.
    await service.delete(ADMIN, privateOne.webhook.id, ORIGIN);
  });
});

describe('isPublicAddress', () => {
  it.each([
    ['8.8.8.8', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.2', false],
    ['::ffff:192.168.0.1', false],
    ['::ffff:8.8.8.8', true],
    ['64:ff9b::a00:1', false],
    ['2002:a00:1::', false],
    ['fc00::1', false],
    ['::', false],
    ['::1', false],
    ['::7f00:1', false],
    ['::a00:1', false],
    ['::808:808', false],
    ['not-an-address', false],
  ])('when the address is %s, then public is %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});
