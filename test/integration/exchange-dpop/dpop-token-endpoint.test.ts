import { createPublicKey, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { startTestApp, type TestApp } from '../../helpers/app';
import { dpopKey, type DpopKey, type ProofAlgorithm } from '../../helpers/dpop';
import { expectOAuthError } from '../../helpers/errors';
import { createApiKey, createUser, type TestApiKey, type TestUser } from '../../helpers/factories';
import { claimsOf } from '../../helpers/tokens';
import { assertionOf, JWT_BEARER, OAUTH2, post, stateOf } from '../oauth2/support';
import { clientCredentials, dpopCall, dpopChallenge, ISSUER, TOKEN_URI, tokenRequestWith } from './support';

/**
 * RFC 9449 at POST /oauth2/token: a token request with a valid DPoP proof gets tokens bound to the
 * proof's key (token_type DPoP, cnf.jkt), and a bound session's refresh token is redeemed only with
 * a proof by that key. Every refusal is 400 invalid_dpop_proof and changes nothing.
 */
describe('POST /oauth2/token with DPoP (RFC 9449)', () => {
  let t: TestApp;
  let client: TestApiKey;
  let user: TestUser;
  let key: DpopKey;

  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_CLIENT_IDS: 'dpop-cli' });
    client = await createApiKey(t, { role: 'viewer' });
    user = await createUser(t, { role: 'editor' });
    key = await dpopKey('ES256');
  });
  afterAll(() => t.close());

  const passwordLogin = async (proofKey: DpopKey) =>
    tokenRequestWith(t, { grant_type: 'password', ...user, client_id: 'dpop-cli' }, { dpop: await proofKey.proof('POST', TOKEN_URI) });
  const refresh = async (refreshToken: string, proofKey?: DpopKey) =>
    tokenRequestWith(t, { grant_type: 'refresh_token', refresh_token: refreshToken }, { dpop: proofKey && (await proofKey.proof('POST', TOKEN_URI)) });
  const introspected = async (token: string) => (await post(t, OAUTH2.introspect, { token }, { authorization: `Basic ${Buffer.from(`${client.appname}:${client.appkey}`).toString('base64')}` })).body;

  describe('tokens bound to the proof key', () => {
    it.each<ProofAlgorithm>(['ES256', 'EdDSA', 'Ed25519', 'RS256'])(
      'when client credentials come with a %s proof, then token_type is DPoP and the access token names the key’s thumbprint in cnf.jkt',
      async (alg) => {
        const proofKey = await dpopKey(alg);

        const res = await clientCredentials(t, client, proofKey);

        expect(res.status).toBe(200);
        expect(res.body.token_type).toBe('DPoP');
        expect(claimsOf(res.body.access_token).cnf).toEqual({ jkt: proofKey.jkt });
      },
    );

    it('when client credentials come without a proof, then the token stays a bearer token without cnf', async () => {
      const res = await clientCredentials(t, client);

      expect(res.body.token_type).toBe('bearer');
      expect(claimsOf(res.body.access_token).cnf).toBeUndefined();
    });

    it('when a user logs in with a proof, then the access and refresh tokens, the session and introspection all name the key', async () => {
      const res = await passwordLogin(key);

      expect(res.status).toBe(200);
      expect(res.body.token_type).toBe('DPoP');
      expect(claimsOf(res.body.access_token).cnf).toEqual({ jkt: key.jkt });
      expect(claimsOf(res.body.refresh_token).cnf).toEqual({ jkt: key.jkt });
      const { rows } = await t.db.query('SELECT dpop_jkt FROM sessions WHERE id = $1', [res.body['session-state']]);
      expect(rows[0]).toEqual({ dpop_jkt: key.jkt });
      expect(await introspected(res.body.access_token)).toEqual(expect.objectContaining({ active: true, cnf: { jkt: key.jkt } }));
    });

    it('when a jwt-bearer grant comes with a proof, then its tokens are bound too', async () => {
      const res = await tokenRequestWith(t, { grant_type: JWT_BEARER, assertion: assertionOf(client) }, { dpop: await key.proof('POST', TOKEN_URI) });

      expect(res.status).toBe(200);
      expect(res.body.token_type).toBe('DPoP');
      expect(claimsOf(res.body.refresh_token).cnf).toEqual({ jkt: key.jkt });
    });

    it('when the proof’s htu carries a query, another case of the host or the default port, then it still matches (RFC 9449 §4.3)', async () => {
      for (const htu of [`${TOKEN_URI}?x=1`, 'HTTP://ISSUER.TEST/oauth2/token', 'http://issuer.test:80/oauth2/token', `${TOKEN_URI}#f`]) {
        const res = await tokenRequestWith(t, { grant_type: 'client_credentials' }, { authorization: basicOf(client), dpop: await key.proof('POST', htu) });
        expect([htu, res.status]).toEqual([htu, 200]);
      }
    });
  });

  describe('refresh of a bound session', () => {
    it('when it is refreshed with a proof by the same key, then the new tokens are bound to it and the session goes on', async () => {
      const login = await passwordLogin(key);

      const res = await refresh(login.body.refresh_token, key);

      expect(res.status).toBe(200);
      expect(res.body.token_type).toBe('DPoP');
      expect(res.body['session-state']).toBe(login.body['session-state']);
      expect(claimsOf(res.body.access_token).cnf).toEqual({ jkt: key.jkt });
      expect(claimsOf(res.body.refresh_token).cnf).toEqual({ jkt: key.jkt });
    });

    it('when it is refreshed by another key or with no proof, then 400 invalid_dpop_proof, and the refresh token still works with the right key', async () => {
      const login = await passwordLogin(key);
      const before = await stateOf(t);

      const otherKey = await refresh(login.body.refresh_token, await dpopKey('ES256'));
      const noProof = await refresh(login.body.refresh_token);

      expectOAuthError(otherKey, 400, 'invalid_dpop_proof', { message: 'another key' });
      expectOAuthError(noProof, 400, 'invalid_dpop_proof', { message: 'needs a DPoP proof' });
      expect(await stateOf(t)).toEqual(before);
      expect((await refresh(login.body.refresh_token, key)).status).toBe(200);
    });

    it('when the service’s own refresh route gets a bound refresh token without a proof, then 401 with a DPoP challenge; with one, the bound tokens', async () => {
      const login = await passwordLogin(key);
      const own = (proof?: string) => {
        const req = t.http().post('/api/auth/bearer/refresh').type('form');
        return (proof ? req.set('DPoP', proof) : req).send({ refresh_token: login.body.refresh_token });
      };

      const refused = await own();
      const accepted = await own(await key.proof('POST', `${ISSUER}/api/auth/bearer/refresh`));

      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toMatch(/^DPoP error="invalid_dpop_proof"/);
      expect(accepted.status).toBe(200);
      expect(accepted.body.token_type).toBe('DPoP');
      expect(claimsOf(accepted.body.access_token).cnf).toEqual({ jkt: key.jkt });
    });
  });

  describe('a bearer session refreshed with a proof is bound from then on (RFC 9449 §5)', () => {
    const ownRefresh = async (refreshToken: string, proofKey?: DpopKey) => {
      const req = t.http().post('/api/auth/bearer/refresh').type('form');
      return (proofKey ? req.set('DPoP', await proofKey.proof('POST', `${ISSUER}/api/auth/bearer/refresh`)) : req).send({ refresh_token: refreshToken });
    };
    const bearerLogin = async () => (await tokenRequestWith(t, { grant_type: 'password', ...user })).body;

    it('when a bearer session is refreshed with a valid proof, then the new tokens are bound to the proof’s key, and the access token is refused as a bearer token', async () => {
      const login = await bearerLogin();

      const res = await refresh(login.refresh_token, key);

      expect(res.status).toBe(200);
      expect(res.body.token_type).toBe('DPoP');
      expect(res.body['session-state']).toBe(login['session-state']);
      expect(claimsOf(res.body.access_token).cnf).toEqual({ jkt: key.jkt });
      expect(claimsOf(res.body.refresh_token).cnf).toEqual({ jkt: key.jkt });
      expect((await t.http().get('/api/v1/api-keys').set('Authorization', `Bearer ${res.body.access_token}`)).status).toBe(401);
      expect((await dpopCall(t, 'get', '/api/v1/api-keys', res.body.access_token, key)).status).toBe(200);
    });

    it('when a session bound by its refresh is refreshed again with no proof or by another key, then 400 invalid_dpop_proof and the refresh token is not used up; by the same key it works', async () => {
      const bound = (await refresh((await bearerLogin()).refresh_token, key)).body;
      const before = await stateOf(t);

      const noProof = await refresh(bound.refresh_token);
      const otherKey = await refresh(bound.refresh_token, await dpopKey('ES256'));

      expectOAuthError(noProof, 400, 'invalid_dpop_proof', { message: 'needs a DPoP proof' });
      expectOAuthError(otherKey, 400, 'invalid_dpop_proof', { message: 'another key' });
      expect(await stateOf(t)).toEqual(before);
      const sameKey = await refresh(bound.refresh_token, key);
      expect(sameKey.status).toBe(200);
      expect(claimsOf(sameKey.body.access_token).cnf).toEqual({ jkt: key.jkt });
    });

    it('when a bearer session is refreshed with a proof on the service’s own route, then it is bound there too: no proof or another key is 401 with a DPoP challenge, the same key works', async () => {
      const login = await bearerLogin();

      const bound = await ownRefresh(login.refresh_token, key);
      const before = await stateOf(t);
      const noProof = await ownRefresh(bound.body.refresh_token);
      const otherKey = await ownRefresh(bound.body.refresh_token, await dpopKey('ES256'));
      const after = await stateOf(t);
      const sameKey = await ownRefresh(bound.body.refresh_token, key);

      expect(bound.status).toBe(200);
      expect(bound.body.token_type).toBe('DPoP');
      expect(claimsOf(bound.body.access_token).cnf).toEqual({ jkt: key.jkt });
      expect(claimsOf(bound.body.refresh_token).cnf).toEqual({ jkt: key.jkt });
      expect((await t.http().get('/api/v1/api-keys').set('Authorization', `Bearer ${bound.body.access_token}`)).status).toBe(401);
      for (const refused of [noProof, otherKey]) {
        expect(refused.status).toBe(401);
        expect(refused.headers['www-authenticate']).toEqual(dpopChallenge('invalid_dpop_proof'));
      }
      expect(after).toEqual(before);
      expect(sameKey.status).toBe(200);
      expect(claimsOf(sameKey.body.access_token).cnf).toEqual({ jkt: key.jkt });
    });

    it('when a bearer session is refreshed without a proof, then it stays a bearer session', async () => {
      const login = await bearerLogin();

      const res = await refresh(login.refresh_token);

      expect(res.status).toBe(200);
      expect(res.body.token_type).toBe('bearer');
      expect(claimsOf(res.body.access_token).cnf).toBeUndefined();
      expect((await t.http().get('/api/v1/api-keys').set('Authorization', `Bearer ${res.body.access_token}`)).status).toBe(200);
    });
  });

  describe('refused proofs: 400 invalid_dpop_proof, and nothing is issued', () => {
    const refusedWith = async (proof: string | string[], message: string) => {
      const before = await stateOf(t);
      const res = await tokenRequestWith(t, { grant_type: 'client_credentials' }, { authorization: basicOf(client), dpop: proof });
      expectOAuthError(res, 400, 'invalid_dpop_proof', { message });
      expect(await stateOf(t)).toEqual(before);
    };

    it('when the same proof is presented twice, then the second is refused as used before', async () => {
      const proof = await key.proof('POST', TOKEN_URI);
      expect((await tokenRequestWith(t, { grant_type: 'client_credentials' }, { authorization: basicOf(client), dpop: proof })).status).toBe(200);

      await refusedWith(proof, 'used before');
    });

    it('when the proof is for another URI, or another method, then it is refused', async () => {
      await refusedWith(await key.proof('POST', `${ISSUER}/oauth2/revoke`), 'another URI');
      await refusedWith(await key.proof('POST', `https://issuer.test/oauth2/token`), 'another URI');
      await refusedWith(await key.proof('GET', TOKEN_URI), 'another HTTP method');
    });

    it('when the proof’s iat is more than 60 s old or ahead, then it is refused; within 60 s either way it is taken', async () => {
      await refusedWith(await key.proof('POST', TOKEN_URI, { iatOffset: -62 }), 'within 60 seconds');
      await refusedWith(await key.proof('POST', TOKEN_URI, { iatOffset: 62 }), 'within 60 seconds');
      for (const iatOffset of [-55, 55]) expect((await clientCredentials(t, client, key, { iatOffset })).status).toBe(200);
    });

    it('when the proof lacks a jti, htm, htu or iat, then it is refused', async () => {
      for (const claim of ['jti', 'htm', 'htu', 'iat']) {
        const res = await tokenRequestWith(t, { grant_type: 'client_credentials' }, { authorization: basicOf(client), dpop: await key.proof('POST', TOKEN_URI, { claims: { [claim]: undefined } }) });
        expect([claim, res.body.error]).toEqual([claim, 'invalid_dpop_proof']);
      }
    });

    it('when the proof is not typed dpop+jwt, carries a private key, has no jwk, or a key that does not fit its alg, then it is refused', async () => {
      const { d } = key.privateKey.export({ format: 'jwk' });
      await refusedWith(await key.proof('POST', TOKEN_URI, { header: { typ: 'JWT' } }), 'dpop+jwt');
      await refusedWith(await key.proof('POST', TOKEN_URI, { header: { jwk: { ...key.jwk, d } } }), 'public key');
      await refusedWith(await key.proof('POST', TOKEN_URI, { header: { jwk: undefined } }), 'jwk');
      await refusedWith(await key.proof('POST', TOKEN_URI, { header: { jwk: (await dpopKey('Ed25519')).jwk } }), 'does not fit');
    });

    it('when the proof is signed by another key than its jwk, or with an algorithm not taken, then it is refused', async () => {
      const other = await dpopKey('ES256');
      await refusedWith(await other.proof('POST', TOKEN_URI, { header: { jwk: key.jwk } }), 'signature');
      const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'dpop+jwt', jwk: key.jwk })).toString('base64url')}.${Buffer.from('{}').toString('base64url')}.x`;
      await refusedWith(unsigned, 'signed with');
      await refusedWith('not-a-jwt', 'compact JWS');
    });

    it('when the proof uses an RSA key under 2048 bits, an Ed448 key, or a crit header, then it is refused', async () => {
      const handSigned = (alg: string, privateKey: KeyObject, digest: string | null, header: Record<string, unknown> = {}) => {
        const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
        const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
        const input = `${segment({ alg, typ: 'dpop+jwt', jwk, ...header })}.${segment({ jti: randomUUID(), htm: 'POST', htu: TOKEN_URI, iat: Math.floor(Date.now() / 1000) })}`;
        return `${input}.${sign(digest, Buffer.from(input), privateKey).toString('base64url')}`;
      };
      await refusedWith(handSigned('RS256', generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey, 'sha256'), '2048 bits');
      await refusedWith(handSigned('EdDSA', generateKeyPairSync('ed448').privateKey, null), 'does not fit');
      await refusedWith(handSigned('RS256', generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, 'sha256', { crit: ['exp'] }), 'extension');
    });

    it('when the proof carries an exp that has passed or an nbf still ahead, then it is refused; an exp ahead is taken', async () => {
      const now = Math.floor(Date.now() / 1000);
      await refusedWith(await key.proof('POST', TOKEN_URI, { claims: { exp: now - 5 } }), 'expired');
      await refusedWith(await key.proof('POST', TOKEN_URI, { claims: { exp: 'tomorrow' } }), 'expired');
      await refusedWith(await key.proof('POST', TOKEN_URI, { claims: { nbf: now + 30 } }), 'not valid yet');

      const res = await tokenRequestWith(t, { grant_type: 'client_credentials' }, { authorization: basicOf(client), dpop: await key.proof('POST', TOKEN_URI, { claims: { exp: now + 30, nbf: now - 1 } }) });
      expect(res.status).toBe(200);
    });

    it.each<ProofAlgorithm>(['ES256', 'EdDSA', 'RS256'])('when a %s proof’s signature is altered or cut short, then it is refused', async (alg) => {
      const proofKey = await dpopKey(alg);
      const proof = await proofKey.proof('POST', TOKEN_URI);
      const signature = proof.slice(proof.lastIndexOf('.') + 1);
      const flipped = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;

      await refusedWith(`${proof.slice(0, proof.lastIndexOf('.') + 1)}${flipped}`, 'signature');
      await refusedWith(proof.slice(0, -4), 'signature');
      // The same proof, whole, still goes through: the refusals above did not spend it.
      expect((await tokenRequestWith(t, { grant_type: 'client_credentials' }, { authorization: basicOf(client), dpop: proof })).status).toBe(200);
    });

    it('when the proof’s signed claims are not a JSON object, then it is refused', async () => {
      const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk })).toString('base64url');
      const input = `${header}.${Buffer.from('["POST"]').toString('base64url')}`;
      const proof = `${input}.${sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;

      await refusedWith(proof, 'JSON object');
    });

    it('when two DPoP headers are sent, then the request is refused', async () => {
      await refusedWith([await key.proof('POST', TOKEN_URI), await key.proof('POST', TOKEN_URI)], 'one DPoP header');
    });
  });

  it('when the maintenance pass runs, then proofs past their window are pruned and live ones kept', async () => {
    const { runMaintenance } = await import('../../../src/maintenance');
    await t.db.query(`INSERT INTO dpop_proof_jtis (digest, expires_at) SELECT sha256(g::text::bytea), now() - interval '1 hour' FROM generate_series(1, 30) g`);
    await clientCredentials(t, client, key);
    const live = Number((await t.db.query<{ n: string }>('SELECT count(*) AS n FROM dpop_proof_jtis WHERE expires_at > now()')).rows[0]!.n);

    const report = await runMaintenance(t.db, { intervalSeconds: 60, clockTolerance: 0, webhookRetentionDays: 30 });

    expect(report.batches.dpopProofs).toEqual([30]);
    expect(Number((await t.db.query<{ n: string }>('SELECT count(*) AS n FROM dpop_proof_jtis')).rows[0]!.n)).toBe(live);
  });
});

const basicOf = (key: TestApiKey) => `Basic ${Buffer.from(`${key.appname}:${key.appkey}`).toString('base64')}`;
