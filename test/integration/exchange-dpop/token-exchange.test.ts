import { startTestApp, type TestApp } from '../../helpers/app';
import { dpopKey } from '../../helpers/dpop';
import { expectError, expectOAuthError } from '../../helpers/errors';
import { bearer, createApiKey, createUser, randomName, type TestApiKey, type TestUser } from '../../helpers/factories';
import { claimsOf } from '../../helpers/tokens';
import { basic, eventsOf, OAUTH2, post, sessionCount, stateOf } from '../oauth2/support';
import { ACCESS_TOKEN_TYPE, dpopCall, TOKEN_EXCHANGE, TOKEN_URI, tokenRequestWith } from './support';

const BILLING = 'https://billing.example';
const REPORTS = 'https://reports.example';

/**
 * RFC 8693 at POST /oauth2/token: a live access token of this service for a narrower one, in the
 * same session, never outliving it, for AUDIENCE or a value of EXCHANGE_AUDIENCES, with an actor.
 */
describe('POST /oauth2/token: token exchange (RFC 8693)', () => {
  let t: TestApp;
  let admin: TestUser;
  let service: TestApiKey;
  let adminToken: string;

  beforeAll(async () => {
    t = await startTestApp({ EXCHANGE_AUDIENCES: `${BILLING},${REPORTS}`, PUBLIC_CLIENT_IDS: 'downstream-cli' });
    admin = await createUser(t, { role: 'admin' });
    service = await createApiKey(t, { role: 'viewer' });
    adminToken = await loginToken();
  });
  afterAll(() => t.close());

  async function loginToken(scope?: string): Promise<string> {
    const res = await tokenRequestWith(t, { grant_type: 'password', ...admin, ...(scope && { scope }) });
    return res.body.access_token as string;
  }
  const exchange = (parameters: Record<string, string>, options: { authorization?: string; dpop?: string } = {}) =>
    tokenRequestWith(t, { grant_type: TOKEN_EXCHANGE, subject_token_type: ACCESS_TOKEN_TYPE, ...parameters }, options);
  const serviceAuth = () => ({ authorization: basic(service.appname, service.appkey) });
  const introspected = async (token: string) => (await post(t, OAUTH2.introspect, { token }, serviceAuth())).body;

  describe('what it issues', () => {
    it('when a token is exchanged with a narrower scope, then an access token of that scope for the same principal and session, with issued_token_type and no refresh token', async () => {
      const subject = claimsOf(adminToken);

      const res = await exchange({ subject_token: adminToken, scope: 'api-keys:read' }, serviceAuth());

      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'issued_token_type', 'not-before-policy', 'scope', 'session-state', 'token_type']);
      expect(res.body).toEqual(expect.objectContaining({ issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'bearer', scope: 'api-keys:read' }));
      const claims = claimsOf(res.body.access_token);
      expect(claims).toEqual(
        expect.objectContaining({ sub: subject.sub, sid: subject.sid, aud: 'http://issuer.test', scope: 'api-keys:read', client_id: service.appname, typ: 'Bearer' }),
      );
      expect(claims.exp as number).toBeLessThanOrEqual(subject.exp as number);
      expect(claims.act).toBeUndefined();
    });

    it('when the subject token expires before ACCESS_TOKEN_TTL would, then the exchanged token expires with it', async () => {
      const short = await startTestApp({ ACCESS_TOKEN_TTL: '20' });
      try {
        const user = await createUser(short, { role: 'viewer' });
        const subject = (await tokenRequestWith(short, { grant_type: 'password', ...user })).body.access_token as string;
        await new Promise((resolve) => setTimeout(resolve, 1100));

        const res = await tokenRequestWith(short, { grant_type: TOKEN_EXCHANGE, subject_token: subject, subject_token_type: ACCESS_TOKEN_TYPE });

        expect(res.status).toBe(200);
        expect(claimsOf(res.body.access_token).exp).toBe(claimsOf(subject).exp);
        expect(res.body.expires_in).toBeLessThan(20);
      } finally {
        await short.close();
      }
    });

    it('when no scope is asked, then the subject token’s scope; openid is kept only when the subject token has it', async () => {
      const withOpenid = await exchange({ subject_token: await loginToken('openid api-keys:read') });
      const without = await exchange({ subject_token: await loginToken('api-keys:read api-keys:write') });
      const askedOpenid = await exchange({ subject_token: await loginToken('api-keys:read'), scope: 'openid api-keys:read' });

      expect(withOpenid.body.scope).toBe('openid api-keys:read');
      expect(without.body.scope).toBe('api-keys:read api-keys:write');
      expectOAuthError(askedOpenid, 400, 'invalid_scope');
    });

    it('when a wider scope is asked, then 400 invalid_scope and nothing is recorded', async () => {
      const subject = await loginToken('api-keys:read');
      const before = await stateOf(t);

      expectOAuthError(await exchange({ subject_token: subject, scope: 'api-keys:read api-keys:write' }), 400, 'invalid_scope');
      expect(await stateOf(t)).toEqual(before);
    });

    it('when an audience or resource of EXCHANGE_AUDIENCES is named, then the token is for it; another is invalid_target; both or a repeat invalid_request', async () => {
      const byAudience = await exchange({ subject_token: adminToken, audience: BILLING });
      const byResource = await exchange({ subject_token: adminToken, resource: REPORTS });
      const unknown = await exchange({ subject_token: adminToken, audience: 'https://elsewhere.example' });
      const both = await exchange({ subject_token: adminToken, audience: BILLING, resource: REPORTS });
      const repeated = await t.http().post(OAUTH2.token).type('form').send(
        `grant_type=${encodeURIComponent(TOKEN_EXCHANGE)}&subject_token_type=${encodeURIComponent(ACCESS_TOKEN_TYPE)}&subject_token=${adminToken}` +
          `&audience=${encodeURIComponent(BILLING)}&audience=${encodeURIComponent(REPORTS)}`,
      );

      expect(claimsOf(byAudience.body.access_token).aud).toBe(BILLING);
      expect(claimsOf(byResource.body.access_token).aud).toBe(REPORTS);
      expectOAuthError(unknown, 400, 'invalid_target');
      expectOAuthError(both, 400, 'invalid_request');
      expectOAuthError(repeated, 400, 'invalid_request', { message: 'more than once' });
    });

    it('when an actor token is sent, then act names the actor; when the actor token has an act itself, it is nested', async () => {
      const actorToken = (await tokenRequestWith(t, { grant_type: 'client_credentials' }, serviceAuth())).body.access_token as string;
      const actor = claimsOf(actorToken);

      const delegated = await exchange({ subject_token: adminToken, actor_token: actorToken, actor_token_type: ACCESS_TOKEN_TYPE }, serviceAuth());
      const chained = await exchange({ subject_token: adminToken, actor_token: delegated.body.access_token, actor_token_type: ACCESS_TOKEN_TYPE });
      const narrowed = await exchange({ subject_token: delegated.body.access_token, scope: 'api-keys:read' });

      expect(claimsOf(delegated.body.access_token).act).toEqual({ sub: actor.sub });
      expect(claimsOf(chained.body.access_token).act).toEqual({ sub: claimsOf(adminToken).sub, act: { sub: actor.sub } });
      expect(claimsOf(narrowed.body.access_token).act).toEqual({ sub: actor.sub });
      expect(await introspected(delegated.body.access_token)).toEqual(expect.objectContaining({ active: true, act: { sub: actor.sub } }));
    });

    it('when the exchange succeeds, then one token.exchanged event is recorded and no session is opened', async () => {
      const sessions = await sessionCount(t);

      const res = await exchange({ subject_token: adminToken, audience: BILLING, scope: 'api-keys:read' }, serviceAuth());

      expect(await sessionCount(t)).toBe(sessions);
      expect(await eventsOf(t, res)).toEqual([
        expect.objectContaining({
          type: 'token.exchanged',
          actor: `user:${admin.username}`,
          username: admin.username,
          details: expect.objectContaining({ session_id: claimsOf(adminToken).sid, audience: BILLING, scope: 'api-keys:read', client_id: service.appname }),
        }),
      ]);
    });
  });

  describe('what the exchanged token may do', () => {
    it('when a narrower token shares its subject’s session, then this service’s routes give it its own scope, not the session’s', async () => {
      const readOnly = (await exchange({ subject_token: adminToken, scope: 'api-keys:read' })).body.access_token as string;

      const list = await t.http().get('/api/v1/api-keys').set(bearer(readOnly));
      const create = await t.http().post('/api/v1/api-keys').set(bearer(readOnly)).send({ appname: randomName('nope'), roles: [] });
      const audit = await t.http().get('/api/v1/audit-events').set(bearer(readOnly));

      const me = await t.http().get('/api/v1/me').set(bearer(readOnly));

      expect(list.status).toBe(200);
      expectError(create, 403, 'Forbidden');
      expectError(audit, 403, 'Forbidden');
      expect(await introspected(readOnly)).toEqual(expect.objectContaining({ active: true, scope: 'api-keys:read' }));
      expect(me.body.data).toEqual(expect.objectContaining({ name: admin.username, scope: 'api-keys:read', expires_at: claimsOf(readOnly).exp }));
    });

    it('when a token is exchanged for another audience, then this service’s routes refuse it, and introspection describes it', async () => {
      const billing = (await exchange({ subject_token: adminToken, audience: BILLING })).body.access_token as string;

      const res = await t.http().get('/api/v1/api-keys').set(bearer(billing));

      expect(res.status).toBe(401);
      expect(await introspected(billing)).toEqual(expect.objectContaining({ active: true, aud: BILLING }));
    });

    it('when a token for another audience is exchanged again, then only for that same audience: never back to this service, nor on to a third (review finding)', async () => {
      const billing = (await exchange({ subject_token: adminToken, audience: BILLING })).body.access_token as string;

      const back = await exchange({ subject_token: billing });
      const backNamed = await exchange({ subject_token: billing, audience: 'http://issuer.test' });
      const onward = await exchange({ subject_token: billing, audience: REPORTS });
      const narrower = await exchange({ subject_token: billing, audience: BILLING, scope: 'api-keys:read' });

      expectOAuthError(back, 400, 'invalid_target');
      expectOAuthError(backNamed, 400, 'invalid_target');
      expectOAuthError(onward, 400, 'invalid_target');
      expect(narrower.status).toBe(200);
      expect(claimsOf(narrower.body.access_token)).toEqual(expect.objectContaining({ aud: BILLING, scope: 'api-keys:read' }));
    });

    it('when the actor token is one for another audience, then invalid_request: an actor proves itself with a token for this service', async () => {
      const actorToken = (await tokenRequestWith(t, { grant_type: 'client_credentials' }, serviceAuth())).body.access_token as string;
      const actorForBilling = (await exchange({ subject_token: actorToken, audience: BILLING })).body.access_token as string;

      const res = await exchange({ subject_token: adminToken, actor_token: actorForBilling, actor_token_type: ACCESS_TOKEN_TYPE });

      expectOAuthError(res, 400, 'invalid_request', { message: 'actor_token' });
    });

    it('when the subject’s session is revoked, then the exchanged token stops working and is inactive', async () => {
      const subject = await loginToken();
      const exchanged = (await exchange({ subject_token: subject, scope: 'api-keys:read' })).body.access_token as string;
      const forBilling = (await exchange({ subject_token: subject, audience: BILLING })).body.access_token as string;
      expect((await t.http().get('/api/v1/api-keys').set(bearer(exchanged))).status).toBe(200);

      await t.http().post(OAUTH2.revoke).type('form').send({ token: subject });

      expect((await t.http().get('/api/v1/api-keys').set(bearer(exchanged))).status).toBe(401);
      expect(await introspected(exchanged)).toEqual({ active: false });
      expect(await introspected(forBilling)).toEqual({ active: false });
      expectOAuthError(await exchange({ subject_token: subject }), 400, 'invalid_request');
    });
  });

  describe('refused subject and actor tokens: 400 invalid_request (RFC 8693 §2.2.2)', () => {
    it.each([
      ['garbage', () => 'not-a-token'],
      ['a refresh token', async () => (await tokenRequestWith(t, { grant_type: 'password', ...admin })).body.refresh_token as string],
      ['an ID token', async () => (await t.http().post('/api/auth/bearer/token').type('form').send(admin)).body.id_token as string],
    ])('when the subject token is %s, then invalid_request', async (_what, tokenOf) => {
      expectOAuthError(await exchange({ subject_token: await tokenOf() }), 400, 'invalid_request', { message: 'not a live access token' });
    });

    it('when subject_token_type is missing or another type, then invalid_request', async () => {
      const missing = await tokenRequestWith(t, { grant_type: TOKEN_EXCHANGE, subject_token: adminToken });
      const idTokenType = await exchange({ subject_token: adminToken, subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' });
      const otherRequested = await exchange({ subject_token: adminToken, requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' });

      expectOAuthError(missing, 400, 'invalid_request', { message: 'subject_token_type' });
      expectOAuthError(idTokenType, 400, 'invalid_request', { message: 'subject_token_type' });
      expectOAuthError(otherRequested, 400, 'invalid_request', { message: 'requested_token_type' });
    });

    it('when the actor token is bad, lacks its type, or its type comes alone, then invalid_request', async () => {
      expectOAuthError(await exchange({ subject_token: adminToken, actor_token: 'x.y.z', actor_token_type: ACCESS_TOKEN_TYPE }), 400, 'invalid_request');
      expectOAuthError(await exchange({ subject_token: adminToken, actor_token: adminToken }), 400, 'invalid_request', { message: 'actor_token_type' });
      expectOAuthError(await exchange({ subject_token: adminToken, actor_token_type: ACCESS_TOKEN_TYPE }), 400, 'invalid_request', { message: 'actor_token_type' });
    });

    it('when the actor’s session is revoked, then invalid_request and nothing is recorded', async () => {
      const actorToken = (await tokenRequestWith(t, { grant_type: 'client_credentials' }, serviceAuth())).body.access_token as string;
      await t.http().post(OAUTH2.revoke).type('form').send({ token: actorToken });
      const before = await stateOf(t);

      expectOAuthError(await exchange({ subject_token: adminToken, actor_token: actorToken, actor_token_type: ACCESS_TOKEN_TYPE }), 400, 'invalid_request');
      expect(await stateOf(t)).toEqual(before);
    });

    it('when the subject token has expired, then invalid_request and nothing is recorded', async () => {
      const short = await startTestApp({ ACCESS_TOKEN_TTL: '1' });
      try {
        const user = await createUser(short, { role: 'viewer' });
        const subject = (await tokenRequestWith(short, { grant_type: 'password', ...user })).body.access_token as string;
        const exp = claimsOf(subject).exp as number;
        while (Date.now() < exp * 1000) await new Promise((resolve) => setTimeout(resolve, 100));
        const before = await stateOf(short);

        const res = await tokenRequestWith(short, { grant_type: TOKEN_EXCHANGE, subject_token: subject, subject_token_type: ACCESS_TOKEN_TYPE });

        expectOAuthError(res, 400, 'invalid_request');
        expect(await stateOf(short)).toEqual(before);
      } finally {
        await short.close();
      }
    });

    it('when the client authenticates with a wrong secret, or names an unknown public client, then 401 invalid_client; a listed public client may exchange', async () => {
      const wrong = await exchange({ subject_token: adminToken }, { authorization: basic(service.appname, `${service.appkey}x`) });
      const unknownClient = await exchange({ subject_token: adminToken, client_id: 'not-a-client' });
      const publicClient = await exchange({ subject_token: adminToken, client_id: 'downstream-cli' });

      expectOAuthError(wrong, 401, 'invalid_client', { basicChallenge: true });
      expectOAuthError(unknownClient, 401, 'invalid_client');
      expect(publicClient.status).toBe(200);
      expect(claimsOf(publicClient.body.access_token).client_id).toBe('downstream-cli');
    });
  });

  describe('with DPoP', () => {
    it('when a DPoP-bound subject token is exchanged without a proof, or by another key, then 400 invalid_dpop_proof; with its key, the new token is bound too', async () => {
      const key = await dpopKey('ES256');
      const bound = (await tokenRequestWith(t, { grant_type: 'client_credentials' }, { ...serviceAuth(), dpop: await key.proof('POST', TOKEN_URI) })).body
        .access_token as string;

      const noProof = await exchange({ subject_token: bound, scope: 'api-keys:read' });
      const otherKey = await exchange({ subject_token: bound }, { dpop: await (await dpopKey('ES256')).proof('POST', TOKEN_URI) });
      const sameKey = await exchange({ subject_token: bound, scope: 'api-keys:read' }, { dpop: await key.proof('POST', TOKEN_URI) });

      expectOAuthError(noProof, 400, 'invalid_dpop_proof');
      expectOAuthError(otherKey, 400, 'invalid_dpop_proof');
      expect(sameKey.body.token_type).toBe('DPoP');
      expect(claimsOf(sameKey.body.access_token).cnf).toEqual({ jkt: key.jkt });
      expect((await dpopCall(t, 'get', '/api/v1/api-keys', sameKey.body.access_token, key)).status).toBe(200);
    });

    it('when an unbound subject token is exchanged with a valid proof, then the new token is DPoP-bound to the proof’s key and refused as a bearer token', async () => {
      const key = await dpopKey('ES256');

      const res = await exchange({ subject_token: adminToken, scope: 'api-keys:read' }, { dpop: await key.proof('POST', TOKEN_URI) });

      expect(res.status).toBe(200);
      expect(res.body.token_type).toBe('DPoP');
      expect(claimsOf(res.body.access_token).cnf).toEqual({ jkt: key.jkt });
      expect((await t.http().get('/api/v1/api-keys').set(bearer(res.body.access_token))).status).toBe(401);
      expect((await dpopCall(t, 'get', '/api/v1/api-keys', res.body.access_token, key)).status).toBe(200);
    });

    it('when a DPoP-bound actor token comes with an unbound subject, then only a proof by the actor’s key is taken, and the new token is bound to that key', async () => {
      const actorKey = await dpopKey('ES256');
      const actorToken = (await tokenRequestWith(t, { grant_type: 'client_credentials' }, { ...serviceAuth(), dpop: await actorKey.proof('POST', TOKEN_URI) })).body
        .access_token as string;
      const withActor = { subject_token: adminToken, actor_token: actorToken, actor_token_type: ACCESS_TOKEN_TYPE };
      const before = await stateOf(t);

      const noProof = await exchange(withActor);
      const otherKey = await exchange(withActor, { dpop: await (await dpopKey('ES256')).proof('POST', TOKEN_URI) });
      const after = await stateOf(t);
      const actorsKey = await exchange(withActor, { dpop: await actorKey.proof('POST', TOKEN_URI) });

      expectOAuthError(noProof, 400, 'invalid_dpop_proof', { message: 'actor_token' });
      expectOAuthError(otherKey, 400, 'invalid_dpop_proof', { message: 'actor_token' });
      expect(after).toEqual(before);
      expect(actorsKey.status).toBe(200);
      expect(actorsKey.body.token_type).toBe('DPoP');
      expect(claimsOf(actorsKey.body.access_token)).toEqual(expect.objectContaining({ cnf: { jkt: actorKey.jkt }, act: { sub: claimsOf(actorToken).sub } }));
    });

    it('when the subject and actor tokens are bound to two different keys, then no one proof can exchange them: 400 invalid_dpop_proof', async () => {
      const subjectKey = await dpopKey('ES256');
      const actorKey = await dpopKey('ES256');
      const boundTo = async (key: typeof subjectKey) =>
        (await tokenRequestWith(t, { grant_type: 'client_credentials' }, { ...serviceAuth(), dpop: await key.proof('POST', TOKEN_URI) })).body.access_token as string;
      const withActor = { subject_token: await boundTo(subjectKey), actor_token: await boundTo(actorKey), actor_token_type: ACCESS_TOKEN_TYPE };

      const bySubjectKey = await exchange(withActor, { dpop: await subjectKey.proof('POST', TOKEN_URI) });
      const byActorKey = await exchange(withActor, { dpop: await actorKey.proof('POST', TOKEN_URI) });

      expectOAuthError(bySubjectKey, 400, 'invalid_dpop_proof', { message: 'actor_token' });
      expectOAuthError(byActorKey, 400, 'invalid_dpop_proof', { message: 'subject_token' });
    });
  });
});
