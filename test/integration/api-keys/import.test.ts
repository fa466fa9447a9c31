import { createHash, randomBytes } from 'node:crypto';
import { startTestApp, type TestApp, startTwoInstances, closeInstances } from '../../helpers/app';
import { onSharedServerOnly } from '../../helpers/database';
import { bearer, createApiKey, randomName, tokenForRole, type TestApiKey } from '../../helpers/factories';
import { signRequestToken } from '../../helpers/tokens';
import { ADMITTED_STATUS, AUTHENTICATION_PATHS, authenticate, getPolicy, grantsFor, KEYS, type AuthenticationPath, type Grants } from '../key-policies/support';

const IMPORT = `${KEYS}/import`;
const digestOf = (secret: string) => createHash('sha256').update(secret).digest('hex');
/** A key as another system issued it: any shape. */
const foreignSecret = () => `legacy_${randomBytes(18).toString('hex')}`;

const importedKey = (secret: string, extra: Record<string, unknown> = {}) => ({ appname: randomName('imp'), roles: ['viewer'], digest: digestOf(secret), ...extra });

async function importKeys(t: TestApp, keys: unknown[], token?: string) {
  return t
    .http()
    .post(IMPORT)
    .set(bearer(token ?? (await tokenForRole(t, 'admin'))))
    .send({ keys });
}

async function exists(t: TestApp, appname: string): Promise<boolean> {
  const { rows } = await t.db.query('SELECT 1 FROM api_keys WHERE appname = $1', [appname]);
  return rows.length === 1;
}

const SIGNATURE_PATHS: readonly AuthenticationPath[] = ['api-key route', 'client_credentials, client_secret_jwt', 'jwt-bearer'];

/** Contract, "Verifying keys, usage, leaks and imports": import. */
describe('POST /api/v1/api-keys/import', () => {
  let t: TestApp;
  let grants: Grants;

  beforeAll(async () => {
    t = await startTestApp();
    grants = await grantsFor(t);
  });
  afterAll(() => t.close());

  it('when an admin imports keys, then each is created with its policy, as a create records it, with api_key.imported and no appkey', async () => {
    const [a, b] = [foreignSecret(), foreignSecret()];
    const first = importedKey(a, { description: 'from the old system', policy: { permissions: ['billing:read'] } });
    const second = importedKey(b, { roles: [], digest: digestOf(b).toUpperCase() });

    const res = await importKeys(t, [first, second]);

    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      meta: { code: 201, count: 2 },
      data: [
        { appname: first.appname, description: 'from the old system', roles: ['viewer'], last_login: null, last_ip: null },
        { appname: second.appname, description: '', roles: [], last_login: null, last_ip: null },
      ],
    });
    expect(await getPolicy(t, first.appname)).toEqual(expect.objectContaining({ permissions: ['billing:read'], enabled: true }));
    const { rows } = await t.db.query<{ appname: string; details: Record<string, unknown> }>(
      "SELECT appname, details FROM audit_events WHERE type = 'api_key.imported' AND appname = ANY($1) ORDER BY id",
      [[first.appname, second.appname]],
    );
    expect(rows.map((r) => r.appname)).toEqual([first.appname, second.appname]);
    expect(rows[0]!.details).toEqual(expect.objectContaining({ role: 'viewer', policy: expect.objectContaining({ permissions: ['billing:read'] }) }));
  });

  it.each(SIGNATURE_PATHS)('when an imported key signs (%s), then it is refused with a message that says to regenerate it', async (path) => {
    const secret = foreignSecret();
    const key = importedKey(secret);
    expect((await importKeys(t, [key])).status).toBe(201);

    const res = await authenticate(t, path, { appname: key.appname, appkey: secret }, grants);

    expect(res.status).toBe(path === 'jwt-bearer' ? 400 : 401);
    expect(res.body.message ?? res.body.error_description).toMatch(/imported.*regenerate/);
  });

  it.each(AUTHENTICATION_PATHS.filter((p) => !SIGNATURE_PATHS.includes(p)))('when an imported key presents its secret (%s), then it is admitted', async (path) => {
    const secret = foreignSecret();
    const key = importedKey(secret);
    expect((await importKeys(t, [key])).status).toBe(201);

    const res = await authenticate(t, path, { appname: key.appname, appkey: secret }, grants);
    const wrong = await authenticate(t, 'client_credentials, client_secret_basic', { appname: key.appname, appkey: foreignSecret() }, grants);

    expect(res.status).toBe(ADMITTED_STATUS[path]);
    expect(wrong.status).toBe(401);
  });

  it('when an imported key is regenerated, then it is an ordinary key: its new appkey signs, and its imported secret lasts only through the grace', async () => {
    const secret = foreignSecret();
    const key = importedKey(secret);
    await importKeys(t, [key]);
    const admin = await tokenForRole(t, 'admin');

    const regen = await t.http().put(`${KEYS}/${key.appname}/regen?grace_seconds=600`).set(bearer(admin)).send({ roles: ['viewer'] });
    const fresh: TestApiKey = { appname: key.appname, appkey: regen.body.data.appkey };

    expect(regen.status).toBe(200);
    expect((await t.http().post('/api/v1/auth/token').send({ jwt: signRequestToken(fresh.appname, fresh.appkey) })).status).toBe(200);
    expect((await authenticate(t, 'client_credentials, client_secret_post', { appname: key.appname, appkey: secret }, grants)).status).toBe(200);
    // Its imported secret never signs, grace or not.
    expect((await authenticate(t, 'api-key route', { appname: key.appname, appkey: secret }, grants)).status).toBe(401);

    const again = await t.http().put(`${KEYS}/${key.appname}/regen`).set(bearer(admin)).send({ roles: ['viewer'] });
    expect(again.status).toBe(200);
    expect((await authenticate(t, 'client_credentials, client_secret_post', { appname: key.appname, appkey: secret }, grants)).status).toBe(401);
  });

  it('when an imported key is verified, then it is VALID with its roles and permissions, even one shaped like an appkey with a wrong checksum', async () => {
    const secret = foreignSecret();
    const key = importedKey(secret, { policy: { permissions: ['billing:read'] } });
    // Another system's key that happens to look like an appkey of this service, its checksum wrong.
    const ordinary = await createApiKey(t, { role: null });
    const lookalike = ordinary.appkey.slice(0, -1) + (ordinary.appkey.endsWith('A') ? 'B' : 'A');
    const lookalikeKey = importedKey(lookalike);
    expect((await importKeys(t, [key, lookalikeKey])).status).toBe(201);
    const viewer = await tokenForRole(t, 'viewer');
    const verify = (k: string, extra: Record<string, unknown> = {}) => t.http().post('/api/v1/keys/verify').set(bearer(viewer)).send({ key: k, ...extra });

    const imported = await verify(secret, { permissions: ['billing:read'] });
    const shaped = await verify(lookalike);

    expect(imported.body).toEqual(expect.objectContaining({ valid: true, code: 'VALID', appname: key.appname, roles: ['viewer'], permissions: ['billing:read'] }));
    expect(shaped.body).toEqual(expect.objectContaining({ valid: true, code: 'VALID', appname: lookalikeKey.appname }));
    expect((await verify(foreignSecret())).body).toEqual({ valid: false, code: 'NOT_FOUND' });
  });

  it('when an imported key has a long secret, then it verifies VALID and authenticates as a client, and its holder can revoke it, at 2,000 characters and beyond', async () => {
    const long = `${foreignSecret()}${randomBytes(1000).toString('hex')}`.slice(0, 2000);
    const longer = `${foreignSecret()}${randomBytes(5000).toString('hex')}`;
    const [key, longerKey] = [importedKey(long), importedKey(longer)];
    expect((await importKeys(t, [key, longerKey])).status).toBe(201);
    const verify = async (k: string) => t.http().post('/api/v1/keys/verify').set(bearer(await tokenForRole(t, 'viewer'))).send({ key: k });

    const verified = await verify(long);
    const verifiedLonger = await verify(longer);
    const asClient = await authenticate(t, 'client_credentials, client_secret_post', { appname: longerKey.appname, appkey: longer }, grants);
    const revoked = await t.http().post('/api/v1/keys/revoke').send({ key: longer });

    expect(long).toHaveLength(2000);
    expect(verified.body).toEqual(expect.objectContaining({ valid: true, code: 'VALID', appname: key.appname }));
    expect(verifiedLonger.body).toEqual(expect.objectContaining({ valid: true, code: 'VALID', appname: longerKey.appname }));
    expect(asClient.status).toBe(200);
    expect(revoked.status).toBe(200);
    expect(await getPolicy(t, longerKey.appname)).toEqual(expect.objectContaining({ enabled: false, disabled_reason: 'holder' }));
  });

  it('when its holder revokes an imported key with its secret, then it is turned off', async () => {
    const secret = foreignSecret();
    const key = importedKey(secret);
    await importKeys(t, [key]);

    expect((await t.http().post('/api/v1/keys/revoke').send({ key: secret })).status).toBe(200);

    expect(await getPolicy(t, key.appname)).toEqual(expect.objectContaining({ enabled: false, disabled_reason: 'holder' }));
  });

  describe('all or nothing', () => {
    it('when two keys of the body share an appname or a digest, then 409 names them and none is imported', async () => {
      const ok = importedKey(foreignSecret());
      const twin = importedKey(foreignSecret());
      const secret = foreignSecret();

      const sameName = await importKeys(t, [ok, twin, { ...importedKey(foreignSecret()), appname: twin.appname }]);
      const sameDigest = await importKeys(t, [ok, importedKey(secret), importedKey(secret)]);

      expect(sameName.status).toBe(409);
      expect(sameName.body.message).toMatch(/body\.keys\.2\.appname.*body\.keys\.1/);
      expect(sameDigest.status).toBe(409);
      expect(sameDigest.body.message).toMatch(/body\.keys\.2\.digest/);
      expect(await exists(t, ok.appname)).toBe(false);
      expect(await exists(t, twin.appname)).toBe(false);
    });

    it('when a key has the appname or the digest of a stored key, then 409 and the keys before it are not imported either', async () => {
      const stored = await createApiKey(t);
      const before = importedKey(foreignSecret());

      const sameName = await importKeys(t, [before, { ...importedKey(foreignSecret()), appname: stored.appname }]);
      const sameDigest = await importKeys(t, [before, importedKey(stored.appkey)]);

      expect([sameName.status, sameDigest.status]).toEqual([409, 409]);
      expect(sameName.body.message).toMatch(/body\.keys\.1.*already exists/);
      expect(sameDigest.body.message).toMatch(/body\.keys\.1.*same digest/);
      expect(await exists(t, before.appname)).toBe(false);
    });

    it('when one policy is bad, then 400 names it and none is imported', async () => {
      const ok = importedKey(foreignSecret());

      const res = await importKeys(t, [ok, importedKey(foreignSecret(), { policy: { expires_at: 1 } })]);

      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/body\.keys\.1\.policy\.expires_at/);
      expect(await exists(t, ok.appname)).toBe(false);
    });
  });

  it.each(['editor', 'viewer'] as const)('when an %s imports, then 403 and nothing is imported', async (role) => {
    const key = importedKey(foreignSecret());

    const res = await importKeys(t, [key], await tokenForRole(t, role));

    expect(res.status).toBe(403);
    expect(await exists(t, key.appname)).toBe(false);
  });

  it('when the body is not 1 to 1000 keys of the strict shape, then 400 names the field', async () => {
    const none = await importKeys(t, []);
    const badDigest = await importKeys(t, [{ ...importedKey('x'), digest: 'abc' }]);
    const appkeyGiven = await importKeys(t, [{ ...importedKey('x'), appkey: 'ak_x' }]);

    expect([none.status, badDigest.status, appkeyGiven.status]).toEqual([400, 400, 400]);
    expect(none.body.message).toMatch(/body\.keys/);
    expect(badDigest.body.message).toMatch(/body\.keys\.0\.digest/);
    expect(appkeyGiven.body.message).toMatch(/appkey/);
  });

  it('when 1000 keys come in a body above 64 KiB, then all are imported; above 1 MiB the body is 413 and other routes keep 64 KiB', async () => {
    const keys = Array.from({ length: 1000 }, () => importedKey(foreignSecret(), { description: 'x'.repeat(100) }));
    const body = JSON.stringify({ keys });
    expect(body.length).toBeGreaterThan(64 * 1024);

    const res = await importKeys(t, keys);
    const tooLarge = await importKeys(t, [importedKey('x', { description: 'x'.repeat(1024 * 1024) })]);
    const createTooLarge = await t
      .http()
      .post(KEYS)
      .set(bearer(await tokenForRole(t, 'admin')))
      .send({ appname: randomName('big'), roles: [], description: 'x'.repeat(70 * 1024) });

    expect(res.status).toBe(201);
    expect(res.body.meta.count).toBe(1000);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.message).toMatch(/1 MiB/);
    expect(createTooLarge.status).toBe(413);
    expect(createTooLarge.body.message).toMatch(/64 KiB/);
  }, 60_000);

  it('when a key is named "import", then it is read, updated and deleted at its path like any key (only POST imports)', async () => {
    const admin = await tokenForRole(t, 'admin');
    await t.http().delete(`${KEYS}/import`).set(bearer(admin));
    await createApiKey(t, { appname: 'import' });

    const got = await t.http().get(`${KEYS}/import`).set(bearer(admin));
    const updated = await t.http().put(`${KEYS}/import`).set(bearer(admin)).send({ description: 'named import' });
    const deleted = await t.http().delete(`${KEYS}/import`).set(bearer(admin));

    expect([got.status, updated.status, deleted.status]).toEqual([200, 200, 204]);
    expect(got.body.data.appname).toBe('import');
    expect(updated.body.data.description).toBe('named import');
  });

  it('when keys exist, then rewrapping and the sealed census pass over the imported ones', async () => {
    await importKeys(t, [importedKey(foreignSecret())]);

    const census = await t.services.sealedSecrets();
    const resealed = await t.db.withTransaction((tx) => t.services.apiKeys.resealAppkeys(tx));

    expect(census.unopenable).toBe(0);
    expect(resealed).toBe(0);
  });
});

describe('import under KEY_MAX_LIFETIME_DAYS', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ KEY_MAX_LIFETIME_DAYS: '30' });
  });
  afterAll(() => t.close());

  it('when an import gives no expiry, then each key gets the longest lifetime; a later one is a 400', async () => {
    const key = importedKey(foreignSecret());

    const res = await importKeys(t, [key]);
    const tooLate = await importKeys(t, [importedKey(foreignSecret(), { policy: { expires_at: Math.floor(Date.now() / 1000) + 31 * 86_400 } })]);

    expect(res.status).toBe(201);
    const expiresAt = (await getPolicy(t, key.appname)).expires_at as number;
    expect(Math.abs(expiresAt - (Math.floor(Date.now() / 1000) + 30 * 86_400))).toBeLessThan(60);
    expect(tooLate.status).toBe(400);
    expect(tooLate.body.message).toMatch(/body\.keys\.0\.policy\.expires_at/);
  });

  it('when a caller who is not an admin imports a key with an expiry in the past or beyond the ceiling, then 400 before 403', async () => {
    const editor = await tokenForRole(t, 'editor');

    const past = await importKeys(t, [importedKey(foreignSecret(), { policy: { expires_at: 1 } })], editor);
    const tooLate = await importKeys(t, [importedKey(foreignSecret(), { policy: { expires_at: Math.floor(Date.now() / 1000) + 31 * 86_400 } })], editor);
    const valid = await importKeys(t, [importedKey(foreignSecret())], editor);

    expect([past.status, past.body.message]).toEqual([400, expect.stringMatching(/^body\.keys\.0\.policy\.expires_at: must be in the future/)]);
    expect([tooLate.status, tooLate.body.message]).toEqual([400, expect.stringMatching(/^body\.keys\.0\.policy\.expires_at: must be at most 30 days/)]);
    expect(valid.status).toBe(403);
  });
});

/** An imported secret still authenticates as the previous key during a regen's grace, so verification must still read it. */
describe('imported keys: a secret in its regen grace', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('when the only imported key, shaped like an appkey with a wrong checksum, is regenerated with a grace, then after the presence check its old secret still verifies VALID', async () => {
    const ordinary = await createApiKey(t, { role: null });
    const lookalike = ordinary.appkey.slice(0, -1) + (ordinary.appkey.endsWith('A') ? 'B' : 'A');
    const key = importedKey(lookalike);
    expect((await importKeys(t, [key])).status).toBe(201);
    const admin = await tokenForRole(t, 'admin');
    expect((await t.http().put(`${KEYS}/${key.appname}/regen?grace_seconds=600`).set(bearer(admin)).send({ roles: ['viewer'] })).status).toBe(200);

    // What every instance does every 30 seconds: ask whether an imported secret is left.
    await t.services.importedKeys.refresh();
    const res = await t.http().post('/api/v1/keys/verify').set(bearer(await tokenForRole(t, 'viewer'))).send({ key: lookalike });

    expect(res.body).toEqual(expect.objectContaining({ valid: true, code: 'VALID', appname: key.appname }));
  });
});

/** The predicate verification asks before it answers a bad `ak_` checksum without reading (ImportedKeyPresence). */
onSharedServerOnly()('imported keys: their presence, across two instances', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    [a, b] = await startTwoInstances();
  });
  afterAll(() => closeInstances(a, b));

  it('when no key is imported, then neither instance may hold one; after an import on one, it knows at once and the other at its next check; after the regen, neither', async () => {
    expect([a.services.importedKeys.mayHoldImportedKeys(), b.services.importedKeys.mayHoldImportedKeys()]).toEqual([false, false]);

    const key = importedKey(foreignSecret());
    expect((await importKeys(a, [key])).status).toBe(201);
    const right = [a.services.importedKeys.mayHoldImportedKeys(), b.services.importedKeys.mayHoldImportedKeys()];
    await b.services.importedKeys.refresh();
    const afterCheck = b.services.importedKeys.mayHoldImportedKeys();

    await a.http().put(`${KEYS}/${key.appname}/regen`).set(bearer(await tokenForRole(a, 'admin'))).send({});
    await Promise.all([a.services.importedKeys.refresh(), b.services.importedKeys.refresh()]);

    expect(right).toEqual([true, false]);
    expect(afterCheck).toBe(true);
    expect([a.services.importedKeys.mayHoldImportedKeys(), b.services.importedKeys.mayHoldImportedKeys()]).toEqual([false, false]);
  });
});
