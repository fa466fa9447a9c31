/**
 * Issue 39: DPoP (RFC 9449) and token exchange (RFC 8693) with real, unmodified client libraries,
 * openid-client and oauth4webapi, against the running service (a child process whose ISSUER is its
 * own loopback URL): DPoP client credentials, password and refresh, a bound token used on the
 * service's routes, and token exchange with and without an actor. The libraries are ESM-only and
 * Jest runs CommonJS here, so each runs in a plain script (clients/*-dpop.mjs) that prints JSON.
 */
import path from 'node:path';
import { INTEROP_DIR, runScript, startInteropService, type InteropService } from './support/service';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON printed by the scripts

const DOWNSTREAM = 'https://downstream.example';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

let service: InteropService;
const keys: Record<string, { appname: string; appkey: string }> = {};

beforeAll(async () => {
  service = await startInteropService({ EXCHANGE_AUDIENCES: DOWNSTREAM, PUBLIC_CLIENT_IDS: 'openid-client-dpop-cli,oauth4webapi-dpop-cli' });
  for (const appname of ['openid-client-dpop', 'oauth4webapi-dpop']) keys[appname] = await service.createApiKey(appname, 'viewer');
}, 60_000);
afterAll(() => service?.cleanup());

function clientEnv(library: string): Record<string, string> {
  const key = keys[library]!;
  return {
    ISSUER: service.issuer,
    APPNAME: key.appname,
    APPKEY: key.appkey,
    USERNAME: service.admin.username,
    PASSWORD: service.admin.password,
    PUBLIC_CLIENT_ID: `${library}-cli`,
    DOWNSTREAM_AUDIENCE: DOWNSTREAM,
  };
}

const runClient = async (script: string, library: string, scenario: string) =>
  (await runScript<Json>(process.execPath, [path.join(INTEROP_DIR, 'clients', script), scenario], clientEnv(library))).result;

/** A bound token response as the libraries report it (they lower-case token_type). */
const boundTokens = () => expect.objectContaining({ token_type: 'dpop', access: expect.objectContaining({ cnf: { jkt: expect.any(String) } }) });

describe('openid-client (v6) with DPoP and token exchange', () => {
  const run = (scenario: string) => runClient('openid-client-dpop.mjs', 'openid-client-dpop', scenario);

  it('when the API key gets client credentials with an ES256 DPoP handle, then a bound token that fetchProtectedResource uses, and that is refused as a bearer token', async () => {
    const { tokens, viaDpop, asBearer } = await run('dpop-client-credentials');

    expect(tokens).toEqual(boundTokens());
    expect(viaDpop).toEqual({ ok: true, value: 200 });
    expect(asBearer.status).toBe(401);
    expect(asBearer.challenge).toMatch(/^Bearer error="invalid_token".*DPoP algs=/);
  });

  it('when a public client logs in by password with DPoP, then the refresh needs the same key: none or another is invalid_dpop_proof, and the refresh token still works', async () => {
    const { login, withoutProof, anotherKey, refreshed } = await run('dpop-password-refresh');

    expect(login).toEqual(boundTokens());
    expect(login.validatedIdToken).toEqual(expect.objectContaining({ aud: 'openid-client-dpop-cli' }));
    expect(withoutProof).toEqual(expect.objectContaining({ status: 400, error: 'invalid_dpop_proof' }));
    expect(anotherKey).toEqual(expect.objectContaining({ status: 400, error: 'invalid_dpop_proof' }));
    expect(refreshed).toEqual(expect.objectContaining({ token_type: 'dpop', session_state: login.session_state, refresh_token: true }));
    expect(refreshed.access.cnf).toEqual(login.access.cnf);
  });

  it('when the API key exchanges the user’s token through genericGrantRequest, then a narrower token for the audience, then one naming it as actor; an unknown audience is invalid_target', async () => {
    const { subject, actor, narrowed, delegated, unknownAudience } = await run('token-exchange');

    expect(narrowed).toEqual(
      expect.objectContaining({
        issued_token_type: ACCESS_TOKEN_TYPE,
        token_type: 'bearer',
        scope: 'api-keys:read',
        refresh_token: false,
        access: expect.objectContaining({ sub: subject.sub, sid: subject.sid, aud: DOWNSTREAM, client_id: 'openid-client-dpop' }),
      }),
    );
    expect(narrowed.access.exp).toBeLessThanOrEqual(subject.exp);
    expect(delegated.access).toEqual(expect.objectContaining({ sub: subject.sub, aud: service.issuer, act: { sub: actor.sub } }));
    expect(unknownAudience).toEqual(expect.objectContaining({ status: 400, error: 'invalid_target' }));
  });
});

describe('oauth4webapi (v3) with DPoP and token exchange', () => {
  const run = (scenario: string) => runClient('oauth4webapi-dpop.mjs', 'oauth4webapi-dpop', scenario);

  it('when the API key gets client credentials with an EdDSA DPoP handle, then a bound token that protectedResourceRequest uses', async () => {
    const { tokens, readStatus, readAppname } = await run('dpop-client-credentials');

    expect(tokens).toEqual(boundTokens());
    expect([readStatus, readAppname]).toEqual([200, 'oauth4webapi-dpop']);
  });

  it('when a public client logs in by password with an RS256 DPoP key and refreshes twice, then another key is invalid_dpop_proof and the session goes on', async () => {
    const { login, anotherKey, refreshed, again } = await run('dpop-password-refresh');

    expect(login).toEqual(boundTokens());
    expect(anotherKey).toEqual(expect.objectContaining({ status: 400, error: 'invalid_dpop_proof' }));
    expect(refreshed).toEqual(expect.objectContaining({ token_type: 'dpop', session_state: login.session_state }));
    expect(again).toEqual(expect.objectContaining({ token_type: 'dpop', session_state: login.session_state }));
  });

  it('when the API key exchanges the user’s token (resource, then an actor), then the narrower and the delegated token; widening is invalid_scope', async () => {
    const { subject, actor, narrowed, delegated, widened } = await run('token-exchange');

    expect(narrowed).toEqual(expect.objectContaining({ issued_token_type: ACCESS_TOKEN_TYPE, scope: 'api-keys:read', access: expect.objectContaining({ aud: DOWNSTREAM, sub: subject.sub }) }));
    expect(delegated).toEqual(expect.objectContaining({ scope: subject.scope, refresh_token: false, access: expect.objectContaining({ act: { sub: actor.sub } }) }));
    expect(widened).toEqual(expect.objectContaining({ ok: false, status: 400, error: 'invalid_scope' }));
  });
});
