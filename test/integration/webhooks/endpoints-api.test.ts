import { startTestApp, type TestApp } from '../../helpers/app';
import { expectError } from '../../helpers/errors';
import { bearer, createApiKey, loginWithApiKey, tokenForRole } from '../../helpers/factories';
import { adminToken, createEndpoint, WEBHOOKS } from './support';

const HOOK = 'http://127.0.0.1:9/hook';

describe('the webhook endpoints API: admins only, strict bodies, the secret shown once', () => {
  let t: TestApp;
  let admin: string;

  beforeAll(async () => {
    // Endpoints on a closed loopback port, with a slow poll: nothing here is about delivery.
    t = await startTestApp({ WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_POLL_INTERVAL_MS: '60000' });
    admin = await adminToken(t);
  });
  afterAll(() => t?.close());

  const auditOf = async (id: string) => {
    const res = await t.http().get('/api/v1/audit-events').set(bearer(admin));
    return (res.body.data as { type: string; details: Record<string, unknown> }[]).filter((e) => e.details.webhook_id === id);
  };

  it('when an admin registers an endpoint, then 201 with the record and a whsec_ secret of 32 bytes, audited without the secret', async () => {
    const res = await t.http().post(WEBHOOKS).set(bearer(admin)).send({ url: HOOK, events: ['api_key.created', 'api_key.created', '*'], description: 'billing' });

    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.meta).toEqual({ code: 201, count: 1 });
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: HOOK,
      events: ['api_key.created', '*'],
      description: 'billing',
      enabled: true,
      created_at: expect.any(Number),
      secret: expect.stringMatching(/^whsec_/),
    });
    expect(Buffer.from((res.body.data.secret as string).slice(6), 'base64')).toHaveLength(32);
    const [event] = await auditOf(res.body.data.id);
    expect(event).toMatchObject({ type: 'webhook.created', details: { webhook_id: res.body.data.id, host: '127.0.0.1' } });
    expect(JSON.stringify(event)).not.toContain((res.body.data.secret as string).slice(6));
  });

  it('when an endpoint is read, listed, replaced and deleted, then the secret never shows again and every change is audited', async () => {
    const created = await createEndpoint(t, admin, { url: HOOK, events: ['*'] });

    const got = await t.http().get(`${WEBHOOKS}/${created.id}`).set(bearer(admin));
    const listed = await t.http().get(WEBHOOKS).set(bearer(admin));
    const put = await t.http().put(`${WEBHOOKS}/${created.id}`).set(bearer(admin)).send({ url: `${HOOK}2`, events: ['user.created'], enabled: false });
    const deleted = await t.http().delete(`${WEBHOOKS}/${created.id}`).set(bearer(admin));
    const gone = await t.http().get(`${WEBHOOKS}/${created.id}`).set(bearer(admin));

    expect(got.status).toBe(200);
    expect(got.body.data).not.toHaveProperty('secret');
    expect(listed.body.data.map((w: { id: string }) => w.id)).toContain(created.id);
    expect(listed.body.data.every((w: object) => !('secret' in w))).toBe(true);
    expect(put.body.data).toMatchObject({ url: `${HOOK}2`, events: ['user.created'], description: '', enabled: false });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectError(gone, 404, 'NotFound');
    expect((await auditOf(created.id)).map((e) => e.type)).toEqual(['webhook.deleted', 'webhook.updated', 'webhook.created']);
  });

  it('when the secret is rotated, then 200 with a new secret, audited as webhook.secret_rotated', async () => {
    const created = await createEndpoint(t, admin, { url: HOOK, events: ['*'] });

    const res = await t.http().post(`${WEBHOOKS}/${created.id}/rotate-secret`).set(bearer(admin));

    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.data.secret).toMatch(/^whsec_/);
    expect(res.body.data.secret).not.toBe(created.secret);
    expect((await auditOf(created.id)).map((e) => e.type)).toContain('webhook.secret_rotated');
  });

  it('when the list is paged with limit and after, then the pages follow each other by id', async () => {
    for (let i = 0; i < 3; i++) await createEndpoint(t, admin, { url: HOOK, events: ['*'] });
    const all = (await t.http().get(WEBHOOKS).set(bearer(admin))).body.data.map((w: { id: string }) => w.id) as string[];

    const first = await t.http().get(WEBHOOKS).query({ limit: 2 }).set(bearer(admin));
    const second = await t.http().get(WEBHOOKS).query({ limit: 2, after: first.body.data[1].id }).set(bearer(admin));

    expect(all).toEqual([...all].sort());
    expect([...first.body.data, ...second.body.data].map((w: { id: string }) => w.id)).toEqual(all.slice(0, 4));
  });

  it('when the delivery log is paged, then newest first, and after continues below the last id', async () => {
    const created = await createEndpoint(t, admin, { url: HOOK, events: ['user.deleted'] });
    const sent: string[] = [];
    for (let i = 0; i < 3; i++) sent.push((await t.http().post(`${WEBHOOKS}/${created.id}/test`).set(bearer(admin))).body.data.id);

    const first = await t.http().get(`${WEBHOOKS}/${created.id}/deliveries`).query({ limit: 2 }).set(bearer(admin));
    const second = await t.http().get(`${WEBHOOKS}/${created.id}/deliveries`).query({ limit: 2, after: first.body.data[1].id }).set(bearer(admin));
    const pending = await t.http().get(`${WEBHOOKS}/${created.id}/deliveries`).query({ status: 'delivered' }).set(bearer(admin));

    expect([...first.body.data, ...second.body.data].map((d: { id: string }) => d.id)).toEqual([...sent].reverse());
    expect(first.body.data[0]).toMatchObject({ type: 'webhook.tested', status: 'pending', attempts: 0, last_status_code: null, next_attempt_at: expect.any(Number) });
    expect(pending.body.data).toEqual([]);
  });

  describe('roles: admins only, users and keys alike', () => {
    it.each(['editor', 'viewer', null] as const)('when a %s user calls any webhook route, then 403 and nothing changes', async (role) => {
      const created = await createEndpoint(t, admin, { url: HOOK, events: ['*'] });
      const token = await tokenForRole(t, role);

      const answers = await Promise.all([
        t.http().get(WEBHOOKS).set(bearer(token)),
        t.http().post(WEBHOOKS).set(bearer(token)).send({ url: HOOK, events: ['*'] }),
        t.http().put(`${WEBHOOKS}/${created.id}`).set(bearer(token)).send({ url: HOOK, events: ['user.created'] }),
        t.http().delete(`${WEBHOOKS}/${created.id}`).set(bearer(token)),
        t.http().post(`${WEBHOOKS}/${created.id}/rotate-secret`).set(bearer(token)),
        t.http().get(`${WEBHOOKS}/${created.id}/deliveries`).set(bearer(token)),
        t.http().post(`${WEBHOOKS}/${created.id}/test`).set(bearer(token)),
      ]);

      for (const res of answers) expectError(res, 403, 'Forbidden');
      expect((await t.http().get(`${WEBHOOKS}/${created.id}`).set(bearer(admin))).body.data.events).toEqual(['*']);
      expect(await auditOf(created.id)).toHaveLength(1);
    });

    it('when an admin API key calls it, then it is served like an admin user', async () => {
      const key = await createApiKey(t, { role: 'admin' });
      const token = (await loginWithApiKey(t, key)).access_token;

      const res = await t.http().post(WEBHOOKS).set(bearer(token)).send({ url: HOOK, events: ['*'] });

      expect(res.status).toBe(201);
    });
  });

  describe('body and parameter rules', () => {
    it.each([
      [{ url: HOOK, events: ['*'], enabled: true }, 'body: unknown field "enabled"'],
      [{ url: HOOK, events: ['*'], secret: 'whsec_x' }, 'body: unknown field "secret"'],
      [{ url: HOOK, events: ['api_key.exploded'] }, 'body.events.0: must be "*" or an audit event type'],
      [{ url: HOOK, events: [] }, 'body.events: must name at least one event type'],
      [{ url: HOOK }, 'body.events: is required'],
      [{ events: ['*'] }, 'body.url: is required'],
      [{ url: 'ftp://127.0.0.1/x', events: ['*'] }, 'body.url: must be an http: or https: URL'],
      [{ url: 'not a url', events: ['*'] }, 'body.url: must be an absolute URL'],
      [{ url: 'http://user:pw@127.0.0.1/x', events: ['*'] }, 'body.url: must not hold a user name or password'],
      [{ url: HOOK, events: ['*'], description: 'x'.repeat(1025) }, 'body.description: must be at most 1024 characters'],
    ])('when the create body is %j, then 400 naming the field, and nothing is created', async (body, message) => {
      const before = (await t.http().get(WEBHOOKS).set(bearer(admin))).body.meta.count;

      const res = await t.http().post(WEBHOOKS).set(bearer(admin)).send(body);

      expectError(res, 400, 'BadRequest', message);
      expect((await t.http().get(WEBHOOKS).set(bearer(admin))).body.meta.count).toBe(before);
    });

    it('when a PUT names an unknown field or omits the url, then 400 and the endpoint is unchanged', async () => {
      const created = await createEndpoint(t, admin, { url: HOOK, events: ['*'], description: 'kept' });

      const unknown = await t.http().put(`${WEBHOOKS}/${created.id}`).set(bearer(admin)).send({ url: HOOK, events: ['*'], id: 'x' });
      const missing = await t.http().put(`${WEBHOOKS}/${created.id}`).set(bearer(admin)).send({ events: ['*'] });

      expectError(unknown, 400, 'BadRequest', 'body: unknown field "id"');
      expectError(missing, 400, 'BadRequest', 'body.url: is required');
      expect((await t.http().get(`${WEBHOOKS}/${created.id}`).set(bearer(admin))).body.data.description).toBe('kept');
    });

    it('when rotate-secret or test get a body with a field, then 400 naming it', async () => {
      const created = await createEndpoint(t, admin, { url: HOOK, events: ['*'] });

      expectError(await t.http().post(`${WEBHOOKS}/${created.id}/rotate-secret`).set(bearer(admin)).send({ secret: 'mine' }), 400, 'BadRequest', 'body: unknown field "secret"');
      expectError(await t.http().post(`${WEBHOOKS}/${created.id}/test`).set(bearer(admin)).send({ type: 'x' }), 400, 'BadRequest', 'body: unknown field "type"');
    });

    it('when the id is not a UUID, then 400; when no endpoint has it, then 404', async () => {
      expectError(await t.http().get(`${WEBHOOKS}/nope`).set(bearer(admin)), 400, 'BadRequest', 'params.id: must be a webhook id');
      expectError(await t.http().get(`${WEBHOOKS}/00000000-0000-4000-8000-000000000000`).set(bearer(admin)), 404, 'NotFound');
      expectError(await t.http().get(`${WEBHOOKS}/00000000-0000-4000-8000-000000000000/deliveries`).set(bearer(admin)), 404, 'NotFound');
      expectError(await t.http().get(`${WEBHOOKS}/00000000-0000-4000-8000-000000000000/deliveries`).query({ after: 'x' }).set(bearer(admin)), 400, 'BadRequest', 'query.after');
    });

    it('when a test is asked of a disabled endpoint, then 409 and nothing is queued', async () => {
      const created = await createEndpoint(t, admin, { url: HOOK, events: ['user.deleted'] });
      await t.http().put(`${WEBHOOKS}/${created.id}`).set(bearer(admin)).send({ url: HOOK, events: ['user.deleted'], enabled: false });

      const res = await t.http().post(`${WEBHOOKS}/${created.id}/test`).set(bearer(admin));

      expectError(res, 409, 'Conflict', 'disabled');
      expect((await t.http().get(`${WEBHOOKS}/${created.id}/deliveries`).set(bearer(admin))).body.data).toEqual([]);
    });

    it('when a viewer registers an endpoint with a URL of the wrong form, then 400 before the 403, as for any bad field', async () => {
      const viewer = await tokenForRole(t, 'viewer');

      const badScheme = await t.http().post(WEBHOOKS).set(bearer(viewer)).send({ url: 'ftp://x', events: ['*'] });
      const credentials = await t.http().post(WEBHOOKS).set(bearer(viewer)).send({ url: 'http://user:pw@127.0.0.1/x', events: ['*'] });
      const wellFormed = await t.http().post(WEBHOOKS).set(bearer(viewer)).send({ url: HOOK, events: ['*'] });

      expectError(badScheme, 400, 'BadRequest', 'body.url: must be an http: or https: URL');
      expectError(credentials, 400, 'BadRequest', 'body.url: must not hold a user name or password');
      expectError(wellFormed, 403, 'Forbidden');
    });

    it('when a PUT to an unknown id has a URL of the wrong form, then 400 before the 404; well formed, then 404', async () => {
      const unknown = `${WEBHOOKS}/00000000-0000-4000-8000-000000000000`;

      const refused = await t.http().put(unknown).set(bearer(admin)).send({ url: 'ftp://x', events: ['*'] });
      const wellFormed = await t.http().put(unknown).set(bearer(admin)).send({ url: HOOK, events: ['*'] });

      expectError(refused, 400, 'BadRequest', 'body.url: must be an http: or https: URL');
      expectError(wellFormed, 404, 'NotFound');
    });

    it('when the body is not JSON, then 415; when there is no token, then 401 before anything else', async () => {
      expectError(await t.http().post(WEBHOOKS).set(bearer(admin)).type('form').send('url=x'), 415, 'UnsupportedMediaType');
      expectError(await t.http().post(WEBHOOKS).type('form').send('url=x'), 401, 'Unauthorized');
      expectError(await t.http().patch(WEBHOOKS).set(bearer(admin)), 405, 'MethodNotAllowed');
    });
  });
});
