import { startTestApp, type TestApp } from '../../helpers/app';
import { bearer, createApiKey, tokenForRole, type TestApiKey } from '../../helpers/factories';
import { claimsOf, hmacSignedToken, signRequestToken, unsignedToken } from '../../helpers/tokens';
import { expectError } from '../../helpers/errors';
import {
  callProtected,
  expectTokenResponse,
  ISSUER,
  nowSeconds,
  PATHS,
  requestClaims,
  signAsymmetric,
} from './support';

describe('POST /api/v1/auth/token (token via API key)', () => {
  let t: TestApp;
  let key: TestApiKey;
  let otherKey: TestApiKey;

  beforeAll(async () => {
    t = await startTestApp();
    key = await createApiKey(t, { role: 'viewer' });
    otherKey = await createApiKey(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  const exchange = (jwt: unknown) => t.http().post(PATHS.apiKeyToken).send({ jwt });

  describe('happy path', () => {
    it('when a JSON body carries a valid HS256 request token, then 200 with a token response and a working access token', async () => {
      const res = await exchange(signRequestToken(key.appname, key.appkey));

      expectTokenResponse(res, { accessTtl: 300 });
      expect(claimsOf(res.body.access_token)).toMatchObject({ preferred_username: key.appname, principal_type: 'api_key' });
      expect((await callProtected(t, res.body.access_token)).status).toBe(200);
    });

    it('when the request token is sent form-urlencoded, then 200 with a token response', async () => {
      const res = await t.http().post(PATHS.apiKeyToken).type('form').send({ jwt: signRequestToken(key.appname, key.appkey) });

      expectTokenResponse(res, { accessTtl: 300 });
    });

    it.each(['HS384', 'HS512'] as const)('when the request token is signed %s, then it is accepted', async (algorithm) => {
      const res = await exchange(signRequestToken(key.appname, key.appkey, { algorithm }));

      expectTokenResponse(res, { accessTtl: 300 });
    });

    it('when sub equals iss, then the request token is accepted', async () => {
      const res = await exchange(signRequestToken(key.appname, key.appkey, { claims: { sub: key.appname } }));

      expect(res.status).toBe(200);
    });

    it('when aud equals the issuer, then the request token is accepted', async () => {
      const res = await exchange(signRequestToken(key.appname, key.appkey, { claims: { aud: ISSUER } }));

      expect(res.status).toBe(200);
    });

    it('when exp - iat is exactly 300 seconds, then the request token is accepted', async () => {
      const now = nowSeconds();

      const res = await exchange(signRequestToken(key.appname, key.appkey, { claims: { iat: now, exp: now + 300 } }));

      expect(res.status).toBe(200);
    });

    it('when a key logs in, then last_login (Unix seconds) and last_ip are recorded on the key', async () => {
      const fresh = await createApiKey(t, { role: 'editor' });
      const admin = await tokenForRole(t, 'admin');
      const before = await t.http().get(`/api/v1/api-keys/${fresh.appname}`).set(bearer(admin));
      const start = Math.floor(Date.now() / 1000);

      const res = await exchange(signRequestToken(fresh.appname, fresh.appkey));
      const end = Math.ceil(Date.now() / 1000);
      const after = await t.http().get(`/api/v1/api-keys/${fresh.appname}`).set(bearer(admin));

      expect(res.status).toBe(200);
      expect(before.body.data).toMatchObject({ last_login: null, last_ip: null });
      expect(after.body.data.last_ip).toBe('127.0.0.1');
      expect(Number.isInteger(after.body.data.last_login)).toBe(true);
      expect(after.body.data.last_login).toBeGreaterThanOrEqual(start);
      expect(after.body.data.last_login).toBeLessThanOrEqual(end);
    });
  });

  // Exchanges that arrive together share one statement and one commit; each must still be its own login.
  describe('concurrent exchanges', () => {
    it('when 40 request tokens of four keys are exchanged at once, then each gets a session of its own for its own key', async () => {
      const keys = [
        { ...key, roles: ['viewer'] },
        { ...otherKey, roles: ['viewer'] },
        { ...(await createApiKey(t, { role: 'editor' })), roles: ['editor'] },
        { ...(await createApiKey(t, { role: null })), roles: [] },
      ];
      const sent = Array.from({ length: 40 }, (_, i) => keys[i % keys.length]!);

      const responses = await Promise.all(sent.map((k) => exchange(signRequestToken(k.appname, k.appkey))));

      responses.forEach((res) => expectTokenResponse(res, { accessTtl: 300 }));
      expect(new Set(responses.map((res) => res.body['session-state'])).size).toBe(40);
      expect(responses.map((res) => claimsOf(res.body.access_token))).toEqual(
        sent.map((k) => expect.objectContaining({ preferred_username: k.appname, roles: k.roles })),
      );
      const probes = await Promise.all(responses.slice(0, 4).map((res) => callProtected(t, res.body.access_token)));
      // Each session is live; the key without a role is known but may not list keys.
      expect(probes.map((res) => res.status)).toEqual([200, 200, 200, 403]);
    });

    it('when one request token is sent 20 times at once, then exactly one exchange succeeds and the others are refused as replays', async () => {
      const requestToken = signRequestToken(otherKey.appname, otherKey.appkey);

      const responses = await Promise.all(Array.from({ length: 20 }, () => exchange(requestToken)));

      expect(responses.filter((res) => res.status === 200)).toHaveLength(1);
      responses.filter((res) => res.status !== 200).forEach((res) => expectError(res, 401, 'Unauthorized'));
    });

    it('when good tokens, replays and forgeries arrive together, then only the replays and forgeries are refused', async () => {
      const spent = signRequestToken(key.appname, key.appkey);
      expect((await exchange(spent)).status).toBe(200);
      const sent = [
        { jwt: signRequestToken(key.appname, key.appkey), status: 200 },
        { jwt: spent, status: 401 },
        { jwt: signRequestToken(otherKey.appname, key.appkey), status: 401 },
        { jwt: signRequestToken(otherKey.appname, otherKey.appkey), status: 200 },
        { jwt: spent, status: 401 },
        { jwt: signRequestToken(key.appname, key.appkey), status: 200 },
      ];

      const responses = await Promise.all(sent.map(({ jwt }) => exchange(jwt)));

      expect(responses.map((res) => res.status)).toEqual(sent.map(({ status }) => status));
    });
  });

  describe('request token defects (401)', () => {
    it('when the request token is signed with another key’s appkey, then 401', async () => {
      const res = await exchange(signRequestToken(key.appname, otherKey.appkey));

      expectError(res, 401, 'Unauthorized');
    });

    it('when the appname (iss) is unknown, then 401', async () => {
      const res = await exchange(signRequestToken('no-such-app', key.appkey));

      expectError(res, 401, 'Unauthorized');
    });

    it('when jti is missing, then 401', async () => {
      const res = await exchange(signRequestToken(key.appname, key.appkey, { claims: { jti: undefined } }));

      expectError(res, 401, 'Unauthorized');
    });

    it('when iat is missing, then 401', async () => {
      const res = await exchange(signRequestToken(key.appname, key.appkey, { claims: { iat: undefined } }));

      expectError(res, 401, 'Unauthorized');
    });

    it('when exp is missing, then 401', async () => {
      const res = await exchange(signRequestToken(key.appname, key.appkey, { claims: { exp: undefined } }));

      expectError(res, 401, 'Unauthorized');
    });

    it('when sub differs from iss, then 401', async () => {
      const res = await exchange(signRequestToken(key.appname, key.appkey, { claims: { sub: otherKey.appname } }));

      expectError(res, 401, 'Unauthorized');
    });

    it('when aud is not the issuer, then 401', async () => {
      const res = await exchange(signRequestToken(key.appname, key.appkey, { claims: { aud: 'http://other.test' } }));

      expectError(res, 401, 'Unauthorized');
    });

    it('when exp has passed (beyond the 30 s leeway), then 401', async () => {
      const now = nowSeconds();

      const res = await exchange(signRequestToken(key.appname, key.appkey, { claims: { iat: now - 120, exp: now - 60 } }));

      expectError(res, 401, 'Unauthorized');
    });

    it('when iat is in the future (beyond the 30 s leeway), then 401', async () => {
      const now = nowSeconds();

      const res = await exchange(signRequestToken(key.appname, key.appkey, { claims: { iat: now + 60, exp: now + 120 } }));

      expectError(res, 401, 'Unauthorized');
    });

    it('when exp - iat is over 300 seconds, then 401', async () => {
      const now = nowSeconds();

      const res = await exchange(signRequestToken(key.appname, key.appkey, { claims: { iat: now, exp: now + 301 } }));

      expectError(res, 401, 'Unauthorized');
    });

    it('when the same request token is presented twice, then the first gets 200 and the replay 401', async () => {
      const requestToken = signRequestToken(key.appname, key.appkey);

      const first = await exchange(requestToken);
      const replay = await exchange(requestToken);

      expect(first.status).toBe(200);
      expectError(replay, 401, 'Unauthorized');
    });

    it('when the request token is unsigned (alg none), then 401', async () => {
      const res = await exchange(unsignedToken(requestClaims(key.appname)));

      expectError(res, 401, 'Unauthorized');
    });

    it.each(['RS256', 'ES256'] as const)('when the request token is signed with an asymmetric algorithm (%s), then 401', async (alg) => {
      const res = await exchange(signAsymmetric(requestClaims(key.appname), alg));

      expectError(res, 401, 'Unauthorized');
    });

    it.each([
      ['not a JWT at all', 'not-a-jwt'],
      ['an empty string', ''],
    ])('when jwt is %s, then 401', async (_label, jwt) => {
      const res = await exchange(jwt);

      expectError(res, 401, 'Unauthorized');
    });

    it('when nbf is later than now (beyond the 30 s leeway), then 401; when nbf has passed, then 200', async () => {
      const now = nowSeconds();

      const early = await exchange(signRequestToken(key.appname, key.appkey, { claims: { nbf: now + 60 } }));
      const due = await exchange(signRequestToken(key.appname, key.appkey, { claims: { nbf: now - 10 } }));

      expectError(early, 401, 'Unauthorized');
      expect(due.status).toBe(200);
    });

    it.each([
      ['exp', { exp: String(nowSeconds() + 60) }],
      ['nbf', { nbf: String(nowSeconds()) }],
    ])('when %s is not a number, then 401', async (_claim, claims) => {
      const res = await exchange(hmacSignedToken({ ...requestClaims(key.appname), ...claims }, key.appkey));

      expectError(res, 401, 'Unauthorized');
    });

    it('when the signature is altered, cut off or given with base64 padding, then 401', async () => {
      const [head, body, signature] = signRequestToken(key.appname, key.appkey).split('.') as [string, string, string];
      const flipped = signature.slice(0, -2) + (signature.at(-2) === 'A' ? 'B' : 'A') + signature.at(-1);

      for (const forged of [flipped, '', `${signature}=`, `${signature}A`]) {
        expectError(await exchange(`${head}.${body}.${forged}`), 401, 'Unauthorized');
      }
    });

    it('when the header says JWT but the payload is not JSON, then 401 (not a server error)', async () => {
      const res = await exchange(hmacSignedToken('not json', key.appkey));

      expectError(res, 401, 'Unauthorized');
    });

    it('when the request token lists a critical header extension (crit), then 401, since none is understood here', async () => {
      const res = await exchange(signRequestToken(key.appname, key.appkey, { header: { crit: ['exp'] } }));

      expectError(res, 401, 'Unauthorized');
    });
  });

  describe('malformed requests', () => {
    it('when the jwt field is missing, then 400', async () => {
      const res = await t.http().post(PATHS.apiKeyToken).send({});

      expectError(res, 400, 'BadRequest');
    });

    it.each([
      ['a number', 12345],
      ['an object', { token: 'x' }],
    ])('when jwt is %s, then 400', async (_label, value) => {
      const res = await exchange(value);

      expectError(res, 400, 'BadRequest');
    });

    it('when the body has an unknown extra field, then 400', async () => {
      const res = await t
        .http()
        .post(PATHS.apiKeyToken)
        .send({ jwt: signRequestToken(key.appname, key.appkey), extra: 'field' });

      expectError(res, 400, 'BadRequest');
      expect(res.body.message).toContain('extra');
    });

    it('when the body is malformed JSON, then 400', async () => {
      const res = await t.http().post(PATHS.apiKeyToken).set('Content-Type', 'application/json').send('{"jwt": ');

      expectError(res, 400, 'BadRequest');
    });

    it('when the content type is text/plain, then 415', async () => {
      const res = await t
        .http()
        .post(PATHS.apiKeyToken)
        .set('Content-Type', 'text/plain')
        .send(signRequestToken(key.appname, key.appkey));

      expectError(res, 415, 'UnsupportedMediaType');
    });
  });
});
