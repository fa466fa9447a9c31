import { startTestApp, type TestApp } from '../../helpers/app';
import { dpopKey, type DpopKey } from '../../helpers/dpop';
import { expectError } from '../../helpers/errors';
import { createApiKey, type TestApiKey } from '../../helpers/factories';
import { clientCredentials, dpopCall, dpopChallenge, ISSUER } from './support';

/**
 * RFC 9449 §7 on this service's own routes: a DPoP-bound access token is accepted only as
 * `Authorization: DPoP <token>` with a proof by its key that carries the token's hash; as a bearer
 * token it is 401. Every refusal is 401 with a DPoP challenge (invalid_dpop_proof for the proof).
 */
describe('DPoP-bound access tokens on this service’s routes (RFC 9449 §7)', () => {
  let t: TestApp;
  let client: TestApiKey;
  let key: DpopKey;
  let token: string;
  let path: string;

  beforeAll(async () => {
    t = await startTestApp();
    client = await createApiKey(t, { role: 'viewer' });
    key = await dpopKey('ES256');
    token = (await clientCredentials(t, client, key)).body.access_token;
    path = `/api/v1/api-keys/${client.appname}`;
  });
  afterAll(() => t.close());

  const refusedProof = (res: { status: number; headers: Record<string, string>; body: unknown }, message: string) => {
    expectError(res, 401, 'Unauthorized', message);
    expect(res.headers['www-authenticate']).toEqual(dpopChallenge('invalid_dpop_proof'));
  };

  it('when the bound token comes as DPoP with a proof by its key carrying ath, then the call succeeds, on the key routes, the list and introspection', async () => {
    const read = await dpopCall(t, 'get', path, token, key);
    const list = await dpopCall(t, 'get', '/api/v1/api-keys?limit=5', token, key);
    const introspect = await dpopCall(t, 'post', '/api/auth/bearer/introspect', token, key, { body: { token } });

    expect(read.status).toBe(200);
    expect(read.body.data.appname).toBe(client.appname);
    expect(list.status).toBe(200);
    expect(introspect.status).toBe(200);
    expect(introspect.body).toEqual(expect.objectContaining({ active: true, cnf: { jkt: key.jkt } }));
  });

  it('when the bound token is sent as a bearer token, then 401 invalid_token with a DPoP challenge beside the Bearer one', async () => {
    const res = await t.http().get(path).set('Authorization', `Bearer ${token}`);

    expectError(res, 401, 'Unauthorized', 'DPoP-bound');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token", error_description="[^"]+", DPoP algs="ES256 EdDSA Ed25519 RS256"$/);
  });

  it('when the bound token comes as a bearer token with its proof beside it, then it is refused all the same', async () => {
    const res = await dpopCall(t, 'get', path, token, key, { scheme: 'Bearer' });

    expectError(res, 401, 'Unauthorized', 'DPoP-bound');
  });

  it('when no proof comes with the DPoP scheme, then 401 invalid_dpop_proof', async () => {
    refusedProof(await dpopCall(t, 'get', path, token, key, { proof: null }), 'DPoP proof is required');
  });

  it('when the proof lacks ath, or carries another token’s hash, then 401 invalid_dpop_proof', async () => {
    refusedProof(await dpopCall(t, 'get', path, token, key, { claims: { ath: undefined } }), 'ath');
    refusedProof(await dpopCall(t, 'get', path, token, key, { claims: { ath: 'x'.repeat(43) } }), 'ath');
  });

  it('when the proof is by another key than the token’s, then 401 invalid_dpop_proof', async () => {
    refusedProof(await dpopCall(t, 'get', path, token, await dpopKey('ES256')), 'another key');
  });

  it('when a proof is presented a second time, then 401 invalid_dpop_proof: it was used before', async () => {
    const proof = await key.proof('GET', `${ISSUER}${path}`, { accessToken: token });
    expect((await dpopCall(t, 'get', path, token, key, { proof })).status).toBe(200);

    refusedProof(await dpopCall(t, 'get', path, token, key, { proof }), 'used before');
  });

  it('when a proof at the very end of its window (iat 60 s ago) is presented again and again, then only its first use passes (review finding)', async () => {
    // Just after a second begins, so every use falls in the last second the iat check still accepts.
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
    const proof = await key.proof('GET', `${ISSUER}${path}`, { accessToken: token, iatOffset: -60 });

    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await dpopCall(t, 'get', path, token, key, { proof })).status);

    expect(statuses).toEqual([200, 401, 401]);
  });

  it('when the proof is for another URL or another method, then 401 invalid_dpop_proof', async () => {
    refusedProof(await dpopCall(t, 'get', path, token, key, { htu: `${ISSUER}/api/v1/api-keys` }), 'another URI');
    refusedProof(await dpopCall(t, 'get', path, token, key, { htu: `http://127.0.0.1${path}` }), 'another URI');
    refusedProof(await dpopCall(t, 'get', path, token, key, { proof: await key.proof('DELETE', `${ISSUER}${path}`, { accessToken: token }) }), 'another HTTP method');
  });

  it('when the proof is too old, then 401 invalid_dpop_proof', async () => {
    refusedProof(await dpopCall(t, 'get', path, token, key, { iatOffset: -61 }), 'iat');
  });

  it('when a bearer token comes with the DPoP scheme, then 401 invalid_token in a DPoP challenge', async () => {
    const bearerToken = (await clientCredentials(t, client)).body.access_token as string;

    const res = await dpopCall(t, 'get', path, bearerToken, key);

    expectError(res, 401, 'Unauthorized', 'not DPoP-bound');
    expect(res.headers['www-authenticate']).toEqual(dpopChallenge('invalid_token'));
  });

  it('when the DPoP scheme carries a token that fails to verify, then 401 invalid_token in a DPoP challenge', async () => {
    const res = await dpopCall(t, 'get', path, `${token.slice(0, -4)}AAAA`, key);

    expectError(res, 401, 'Unauthorized');
    expect(res.headers['www-authenticate']).toEqual(dpopChallenge('invalid_token'));
  });

  it('when the bound token’s session is revoked, then its DPoP calls are 401 too', async () => {
    const own = (await clientCredentials(t, client, key)).body.access_token as string;
    await t.http().post('/oauth2/revoke').type('form').send({ token: own });

    const res = await dpopCall(t, 'get', path, own, key);

    expectError(res, 401, 'Unauthorized');
    expect(res.headers['www-authenticate']).toEqual(dpopChallenge('invalid_token'));
  });
});
