import { createHash } from 'node:crypto';
import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, loginWithApiKey } from '../../helpers/factories';
import { generateAppkey } from '../../../src/api-keys/appkey';
import { createKeyWithPolicy, getPolicy, KEYS, putPolicy } from '../key-policies/support';
import { KeyListServer, newSigningKey, signatureOf, type SigningKey } from './github-keys-server';

const ENDPOINT = '/api/v1/secret-scanning/github';
const sha256hex = (text: string) => createHash('sha256').update(text).digest('hex');

const finding = (token: string, url = 'https://github.com/octo/repo/blob/abc/config.env') => ({ token, type: 'ak_api_key', url, source: 'content' });

/** Sends `payload` as GitHub does: the raw body, signed by `key` (or `as`, to name another identifier). */
function report(t: TestApp, payload: unknown, key: SigningKey, options: { as?: string; signature?: string } = {}) {
  const body = JSON.stringify(payload);
  return t
    .http()
    .post(ENDPOINT)
    .set('Content-Type', 'application/json')
    .set('Github-Public-Key-Identifier', options.as ?? key.identifier)
    .set('Github-Public-Key-Signature', options.signature ?? signatureOf(key, body))
    .send(body);
}

async function leakEvents(t: TestApp, appname: string) {
  const { rows } = await t.db.query<{ details: Record<string, unknown> }>("SELECT details FROM audit_events WHERE type = 'api_key.leaked' AND appname = $1 ORDER BY id", [appname]);
  return rows.map((r) => r.details);
}

/** Contract, "Leaked keys reported by GitHub secret scanning" (LEAKED_KEY_ACTION=disable, the default). */
describe('POST /api/v1/secret-scanning/github', () => {
  const list = new KeyListServer();
  const github = newSigningKey('github-key-1');
  let t: TestApp;
  // The clock the key list is refetched by (Unix seconds), moved by the tests.
  let at = Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    list.keys = [github];
    t = await startTestApp({ SECRET_SCANNING_KEYS_URL: await list.start() }, { clock: () => at });
  });
  afterAll(async () => {
    await t?.close();
    await list.stop();
  });

  it('when GitHub reports a live key, then it is disabled as leaked, its tokens die, api_key.leaked holds url and source, and the answer labels every token', async () => {
    const key = await createApiKey(t, { role: 'viewer' });
    const tokens = await loginWithApiKey(t, key);
    const stranger = generateAppkey();

    const res = await report(t, [finding(key.appkey), finding(stranger, 'https://gist.github.com/x')], github);

    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { token_hash: sha256hex(key.appkey), token_type: 'ak_api_key', label: 'true_positive' },
      { token_hash: sha256hex(stranger), token_type: 'ak_api_key', label: 'false_positive' },
    ]);
    expect(await getPolicy(t, key.appname)).toEqual(expect.objectContaining({ enabled: false, disabled_reason: 'leaked' }));
    expect((await t.http().get(KEYS).set(bearer(tokens.access_token))).status).toBe(401);
    expect(await leakEvents(t, key.appname)).toEqual([
      expect.objectContaining({ url: 'https://github.com/octo/repo/blob/abc/config.env', source: 'content', action: 'disabled' }),
    ]);
    const { rows } = await t.db.query("SELECT details->>'reason' AS reason FROM audit_events WHERE type = 'api_key.disabled' AND appname = $1", [key.appname]);
    expect(rows).toEqual([{ reason: 'leaked' }]);
  });

  it('when the same key is reported again, then it is still a true positive but gets no second event', async () => {
    const key = await createApiKey(t);
    await report(t, [finding(key.appkey)], github);

    const again = await report(t, [finding(key.appkey, 'https://github.com/elsewhere')], github);

    expect(again.status).toBe(200);
    expect(again.body[0].label).toBe('true_positive');
    expect(await leakEvents(t, key.appname)).toHaveLength(1);
  });

  it('when a reported key is disabled or expired, then it is a true positive and nothing is done to it', async () => {
    const off = await createApiKey(t);
    expect((await putPolicy(t, off.appname, { enabled: false })).status).toBe(200);
    const expired = await createKeyWithPolicy(t, { expires_at: at + 10 });
    at += 11;

    const res = await report(t, [finding(off.appkey), finding(expired.appkey)], github);

    expect(res.body.map((r: { label: string }) => r.label)).toEqual(['true_positive', 'true_positive']);
    expect(await getPolicy(t, off.appname)).toEqual(expect.objectContaining({ disabled_reason: 'manual' }));
    expect(await getPolicy(t, expired.appname)).toEqual(expect.objectContaining({ enabled: true }));
    expect(await leakEvents(t, off.appname)).toEqual([]);
    expect(await leakEvents(t, expired.appname)).toEqual([]);
  });

  it('when the signature is not GitHub\'s, or missing, then 401 and nothing changes', async () => {
    const key = await createApiKey(t);
    const forger = newSigningKey(github.identifier);

    const forged = await report(t, [finding(key.appkey)], github, { signature: signatureOf(forger, JSON.stringify([finding(key.appkey)])) });
    const otherBody = await report(t, [finding(key.appkey)], github, { signature: signatureOf(github, '[]') });
    const missing = await t.http().post(ENDPOINT).set('Content-Type', 'application/json').send(JSON.stringify([finding(key.appkey)]));

    expect([forged.status, otherBody.status, missing.status]).toEqual([401, 401, 401]);
    expect(await getPolicy(t, key.appname)).toEqual(expect.objectContaining({ enabled: true }));
  });

  it('when the signature is over the raw bytes, then a body with its own spacing and key order is accepted, and a signature over a re-serialised payload is 401', async () => {
    const key = await createApiKey(t);
    // As GitHub may send it: spaces, a newline, and keys in another order than JSON.stringify would write.
    const raw = `[ {"url": "https://github.com/octo/repo/blob/abc/.env",  "source": "content", "type": "ak_api_key", "token": "${key.appkey}"} ]\n`;
    const reserialised = JSON.stringify(JSON.parse(raw));
    expect(reserialised).not.toBe(raw);
    const send = (signature: string) =>
      t.http().post(ENDPOINT).set('Content-Type', 'application/json').set('Github-Public-Key-Identifier', github.identifier).set('Github-Public-Key-Signature', signature).send(raw);

    const overOtherBytes = await send(signatureOf(github, reserialised));
    const stillOn = await getPolicy(t, key.appname);
    const overRawBytes = await send(signatureOf(github, raw));

    expect(overOtherBytes.status).toBe(401);
    expect(stillOn).toEqual(expect.objectContaining({ enabled: true }));
    expect(overRawBytes.status).toBe(200);
    expect(overRawBytes.body).toEqual([{ token_hash: sha256hex(key.appkey), token_type: 'ak_api_key', label: 'true_positive' }]);
    expect(await getPolicy(t, key.appname)).toEqual(expect.objectContaining({ enabled: false, disabled_reason: 'leaked' }));
  });

  it('when a signed body is malformed, then 400 naming the field (after the signature held)', async () => {
    const res = await report(t, [{ token: 'x', type: 'ak_api_key', url: '', source: 'content', extra: 1 }], github);
    const empty = await report(t, [], github);

    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/extra/);
    expect(empty.status).toBe(400);
  });

  it('when GitHub sends a report of hundreds of findings within 64 KiB, then every one is labelled; one above 64 KiB is 413 and changes nothing', async () => {
    const [leaked, beyond] = await Promise.all([createApiKey(t), createApiKey(t)]);
    // GitHub gives no maximum: about 240 findings with URLs of 150 characters fill 64 KiB.
    const findingsWith = (count: number, last: string) =>
      Array.from({ length: count }, (_, i) => finding(i === count - 1 ? last : generateAppkey(), `https://github.com/octo/repo/blob/${'a'.repeat(110)}/file-${i}.env`));
    const fits = findingsWith(240, leaked.appkey);
    const tooMany = findingsWith(300, beyond.appkey);
    expect(Buffer.byteLength(JSON.stringify(fits))).toBeLessThan(64 * 1024);
    expect(Buffer.byteLength(JSON.stringify(tooMany))).toBeGreaterThan(64 * 1024);

    const res = await report(t, fits, github);
    const tooLarge = await report(t, tooMany, github);

    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(240);
    expect(res.body[239].label).toBe('true_positive');
    expect(await getPolicy(t, leaked.appname)).toEqual(expect.objectContaining({ enabled: false, disabled_reason: 'leaked' }));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toEqual({ status: 413, name: 'PayloadTooLarge', message: expect.stringMatching(/64 KiB/) });
    expect(await getPolicy(t, beyond.appname)).toEqual(expect.objectContaining({ enabled: true }));
  });

  it('when an unknown identifier arrives, then the list is fetched again at most once a minute, and a key GitHub adds is accepted after that', async () => {
    const rotated = newSigningKey('github-key-2');
    // Known keys are answered from memory.
    expect((await report(t, [finding('x')], github)).status).toBe(200);
    const before = list.fetches;

    at += 61;
    const unknown = await report(t, [finding('x')], rotated);
    const unknownAgain = await report(t, [finding('x')], rotated);
    expect([unknown.status, unknownAgain.status]).toEqual([401, 401]);
    expect(list.fetches).toBe(before + 1);

    list.keys = [github, rotated];
    const tooSoon = await report(t, [finding('x')], rotated);
    at += 60;
    const afterAMinute = await report(t, [finding('x')], rotated);

    expect(tooSoon.status).toBe(401);
    expect(afterAMinute.status).toBe(200);
    expect(list.fetches).toBe(before + 2);
  });

  it('when the key list cannot be fetched, then a report signed by a key not yet known is 503 (GitHub retries)', async () => {
    const later = newSigningKey('github-key-3');
    list.down = true;
    at += 61;
    try {
      const res = await report(t, [finding('x')], later);
      expect(res.status).toBe(503);
      // Known keys still verify while the list is away.
      expect((await report(t, [finding('x')], github)).status).toBe(200);
    } finally {
      list.down = false;
    }
  });
});

describe('POST /api/v1/secret-scanning/github with LEAKED_KEY_ACTION=report', () => {
  const list = new KeyListServer();
  const github = newSigningKey('github-key-1');
  let t: TestApp;

  beforeAll(async () => {
    list.keys = [github];
    t = await startTestApp({ SECRET_SCANNING_KEYS_URL: await list.start(), LEAKED_KEY_ACTION: 'report' });
  });
  afterAll(async () => {
    await t?.close();
    await list.stop();
  });

  it('when GitHub reports a live key, then the leak is recorded and the key keeps working', async () => {
    const key = await createApiKey(t, { role: 'viewer' });

    const res = await report(t, [finding(key.appkey)], github);

    expect(res.body[0].label).toBe('true_positive');
    expect(await getPolicy(t, key.appname)).toEqual(expect.objectContaining({ enabled: true, disabled_reason: null }));
    expect(await leakEvents(t, key.appname)).toEqual([expect.objectContaining({ action: 'reported', source: 'content' })]);
    const tokens = await loginWithApiKey(t, key);
    expect((await t.http().get(KEYS).set(bearer(tokens.access_token))).status).toBe(200);
  });
});
