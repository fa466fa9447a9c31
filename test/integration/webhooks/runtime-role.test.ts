import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { startTestApp, type TestApp } from '../../helpers/app';
import { onSharedServerOnly } from '../../helpers/database';
import { bearer, createApiKey } from '../../helpers/factories';
import { adminToken, createEndpoint, deliveriesOf, eventually, FAST_WEBHOOKS, startReceiver, type Receiver } from './support';

async function asSuperuser(sql: string): Promise<void> {
  const client = new Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function outcome(client: Client, sql: string): Promise<string> {
  try {
    await client.query(sql);
    return 'ok';
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

const INSUFFICIENT_PRIVILEGE = '42501';

/** The roles of the least-privilege test (migrations 0012, 0033): migrations as the owner, the service as its runtime role. */
onSharedServerOnly()('webhooks under the least-privileged runtime role', () => {
  const suffix = randomBytes(5).toString('hex');
  const owner = { name: `apikeys_owner_${suffix}`, password: randomBytes(12).toString('hex') };
  const runtime = { name: `apikeys_rt_${suffix}`, password: randomBytes(12).toString('hex') };
  const schema = `t_${suffix}`;
  const urlFor = (role: { name: string; password: string }) => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.username = role.name;
    url.password = role.password;
    url.searchParams.set('options', `-c search_path=${schema}`);
    return url.toString();
  };
  let t: TestApp | undefined;
  let runtimeClient: Client;
  let receiver: Receiver;

  beforeAll(async () => {
    await asSuperuser(`
      CREATE ROLE ${owner.name} LOGIN PASSWORD '${owner.password}';
      CREATE ROLE ${runtime.name} LOGIN PASSWORD '${runtime.password}';
      CREATE SCHEMA ${schema} AUTHORIZATION ${owner.name};
    `);
    receiver = await startReceiver();
    t = await startTestApp({ ...FAST_WEBHOOKS, DATABASE_URL: urlFor(runtime), MIGRATION_DATABASE_URL: urlFor(owner) });
    runtimeClient = new Client({ connectionString: urlFor(runtime) });
    await runtimeClient.connect();
  });
  afterAll(async () => {
    await runtimeClient?.end();
    await t?.close();
    await receiver?.close();
    await asSuperuser(`
      DROP SCHEMA IF EXISTS ${schema} CASCADE;
      DROP OWNED BY ${owner.name}, ${runtime.name};
      DROP ROLE IF EXISTS ${runtime.name};
      DROP ROLE IF EXISTS ${owner.name};
    `);
  });

  it('when the service runs as the runtime role, then endpoints are managed and events are delivered (the trigger writes the outbox as its owner)', async () => {
    const admin = await adminToken(t!);
    const endpoint = await createEndpoint(t!, admin, { url: receiver.url, events: ['api_key.created'] });

    const key = await createApiKey(t!);
    const [got] = await receiver.waitFor(1);
    await eventually(async () => (await deliveriesOf(t!, admin, endpoint.id))[0]?.status === 'delivered', 5_000, 'delivered');

    expect(got!.json.data.appname).toBe(key.appname);
    expect((await t!.http().post(`/api/v1/webhooks/${endpoint.id}/rotate-secret`).set(bearer(admin))).status).toBe(200);
  });

  it('when the runtime role tries to forge, readdress or rewrite a message, or to bypass the trigger, then PostgreSQL refuses it', async () => {
    const { rows } = await runtimeClient.query<{ id: string; endpoint_id: string }>('SELECT id, endpoint_id FROM webhook_deliveries LIMIT 1');
    const [row] = rows;
    expect(row).toBeDefined();
    const elsewhere = await createEndpoint(t!, await adminToken(t!), { url: `${receiver.url}/elsewhere`, events: ['user.deleted'] });

    const attempts = {
      insert: await outcome(runtimeClient, `INSERT INTO webhook_deliveries (endpoint_id, audit_event_id, type) VALUES ('${row!.endpoint_id}', 1, 'api_key.created')`),
      readdress: await outcome(runtimeClient, `UPDATE webhook_deliveries SET endpoint_id = '${elsewhere.id}' WHERE id = '${row!.id}'`),
      otherEvent: await outcome(runtimeClient, `UPDATE webhook_deliveries SET audit_event_id = 1 WHERE id = '${row!.id}'`),
      newId: await outcome(runtimeClient, `UPDATE webhook_deliveries SET id = gen_random_uuid() WHERE id = '${row!.id}'`),
      retype: await outcome(runtimeClient, `UPDATE webhook_deliveries SET type = 'user.deleted' WHERE id = '${row!.id}'`),
      replaceTrigger: await outcome(runtimeClient, 'CREATE OR REPLACE FUNCTION webhook_deliveries_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$'),
      dropTrigger: await outcome(runtimeClient, 'DROP TRIGGER audit_events_to_webhooks ON audit_events'),
      callTrigger: await outcome(runtimeClient, 'SELECT webhook_deliveries_enqueue()'),
      disableGuard: await outcome(runtimeClient, 'ALTER TABLE webhook_deliveries DISABLE TRIGGER webhook_deliveries_only_from_events'),
    };
    const recordOutcome = await outcome(runtimeClient, `UPDATE webhook_deliveries SET attempts = attempts WHERE id = '${row!.id}'`);

    expect(attempts).toEqual({
      insert: INSUFFICIENT_PRIVILEGE,
      readdress: INSUFFICIENT_PRIVILEGE,
      otherEvent: INSUFFICIENT_PRIVILEGE,
      newId: INSUFFICIENT_PRIVILEGE,
      retype: INSUFFICIENT_PRIVILEGE,
      replaceTrigger: INSUFFICIENT_PRIVILEGE,
      dropTrigger: INSUFFICIENT_PRIVILEGE,
      callTrigger: expect.stringMatching(/^(42501|0A000)$/),
      disableGuard: INSUFFICIENT_PRIVILEGE,
    });
    expect(recordOutcome).toBe('ok');
  });
});
