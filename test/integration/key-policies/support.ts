import type { Response } from 'supertest';
import type { TestApp } from '../../helpers/app';
import { bearer, createUser, randomName, tokenForRole, type TestApiKey } from '../../helpers/factories';
import { signRequestToken } from '../../helpers/tokens';
import type { Role } from '../../../src/shared/principals';

/** Shared bits of the key-policy tests: the policy routes, keys made with a policy, and every way a key authenticates. */

export const KEYS = '/api/v1/api-keys';
export const policyPath = (appname: string) => `${KEYS}/${appname}/policy`;

export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** RFC 6749 §2.3.1: Basic of the form-urlencoded client_id and secret. */
export const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** A key created by a fresh admin through POST /api/v1/api-keys, with `policy` in the create. */
export async function createKeyWithPolicy(t: TestApp, policy: Record<string, unknown> | undefined, role: Role | null = 'viewer'): Promise<TestApiKey> {
  const admin = await tokenForRole(t, 'admin');
  const res = await t
    .http()
    .post(KEYS)
    .set(bearer(admin))
    .send({ appname: randomName('app'), roles: role ? [role] : [], ...(policy !== undefined && { policy }) });
  if (res.status !== 201) throw new Error(`create key failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { appname: res.body.data.appname, appkey: res.body.data.appkey };
}

/** PUT .../policy as a fresh admin; answers the response. */
export async function putPolicy(t: TestApp, appname: string, policy: Record<string, unknown>, token?: string) {
  return t
    .http()
    .put(policyPath(appname))
    .set(bearer(token ?? (await tokenForRole(t, 'admin'))))
    .send(policy);
}

/** GET .../policy as a fresh admin: the policy record. */
export async function getPolicy(t: TestApp, appname: string): Promise<Record<string, unknown>> {
  const res = await t.http().get(policyPath(appname)).set(bearer(await tokenForRole(t, 'admin')));
  if (res.status !== 200) throw new Error(`get policy failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as Record<string, unknown>;
}

/** Every way a key authenticates (contract, "Key policies": "Authentication"), each answering as its route does. */
export const AUTHENTICATION_PATHS = [
  'api-key route',
  'client_credentials, client_secret_basic',
  'client_credentials, client_secret_post',
  'client_credentials, client_secret_jwt',
  'jwt-bearer',
  'password grant, key as client',
  'refresh grant, key as client',
  'revocation, client authentication',
  'introspection, client authentication',
] as const;
export type AuthenticationPath = (typeof AUTHENTICATION_PATHS)[number];

/** How each path refuses a key by its policy: the status and, on the OAuth endpoints, the error code. */
export const REFUSAL_OF: Record<AuthenticationPath, { status: number; error?: string }> = {
  'api-key route': { status: 401 },
  'client_credentials, client_secret_basic': { status: 401, error: 'invalid_client' },
  'client_credentials, client_secret_post': { status: 401, error: 'invalid_client' },
  'client_credentials, client_secret_jwt': { status: 401, error: 'invalid_client' },
  'jwt-bearer': { status: 400, error: 'invalid_grant' },
  'password grant, key as client': { status: 401, error: 'invalid_client' },
  'refresh grant, key as client': { status: 401, error: 'invalid_client' },
  'revocation, client authentication': { status: 401, error: 'invalid_client' },
  'introspection, client authentication': { status: 401, error: 'invalid_client' },
};

/** What the password and refresh grants need: a user of the service. */
export interface Grants {
  user: { username: string; password: string };
  refreshToken: string;
}

/** A user and a refresh token of theirs, for the grants a key takes part in as the client. */
export async function grantsFor(t: TestApp): Promise<Grants> {
  const user = await createUser(t, { role: 'viewer' });
  const res = await t.http().post('/oauth2/token').type('form').send({ grant_type: 'password', ...user });
  return { user, refreshToken: res.body.refresh_token as string };
}

/** One authentication of `key` by `path`, from `headers` (e.g. X-Forwarded-For behind TRUST_PROXY). */
export async function authenticate(t: TestApp, path: AuthenticationPath, key: TestApiKey, grants: Grants, headers: Record<string, string> = {}): Promise<Response> {
  const form = (url: string) => t.http().post(url).type('form').set(headers);
  const assertion = () => signRequestToken(key.appname, key.appkey);
  switch (path) {
    case 'api-key route':
      return t.http().post('/api/v1/auth/token').set(headers).send({ jwt: assertion() });
    case 'client_credentials, client_secret_basic':
      return form('/oauth2/token').set('Authorization', basic(key.appname, key.appkey)).send({ grant_type: 'client_credentials' });
    case 'client_credentials, client_secret_post':
      return form('/oauth2/token').send({ grant_type: 'client_credentials', client_id: key.appname, client_secret: key.appkey });
    case 'client_credentials, client_secret_jwt':
      return form('/oauth2/token').send({ grant_type: 'client_credentials', client_assertion_type: CLIENT_ASSERTION_TYPE, client_assertion: assertion() });
    case 'jwt-bearer':
      return form('/oauth2/token').send({ grant_type: JWT_BEARER, assertion: assertion() });
    case 'password grant, key as client':
      return form('/oauth2/token')
        .set('Authorization', basic(key.appname, key.appkey))
        .send({ grant_type: 'password', ...grants.user });
    case 'refresh grant, key as client':
      // The refresh token is bound to another client: a key that authenticates gets invalid_grant, one its policy refuses invalid_client.
      return form('/oauth2/token').set('Authorization', basic(key.appname, key.appkey)).send({ grant_type: 'refresh_token', refresh_token: grants.refreshToken });
    case 'revocation, client authentication':
      return form('/oauth2/revoke').set('Authorization', basic(key.appname, key.appkey)).send({ token: 'not-a-token' });
    case 'introspection, client authentication':
      return form('/oauth2/introspect').set('Authorization', basic(key.appname, key.appkey)).send({ token: 'not-a-token' });
  }
}

/** The status each path answers a key it admits with (the refresh grant refuses the foreign refresh token after admitting the key). */
export const ADMITTED_STATUS: Record<AuthenticationPath, number> = {
  'api-key route': 200,
  'client_credentials, client_secret_basic': 200,
  'client_credentials, client_secret_post': 200,
  'client_credentials, client_secret_jwt': 200,
  'jwt-bearer': 200,
  'password grant, key as client': 200,
  'refresh grant, key as client': 400,
  'revocation, client authentication': 200,
  'introspection, client authentication': 200,
};

/** The `token.refused` events of one response (matched by its X-Request-Id). */
export async function refusedEventsOf(t: TestApp, res: Response): Promise<{ actor: string; appname: string; details: Record<string, unknown> }[]> {
  const { rows } = await t.db.query<{ actor: string; appname: string; details: Record<string, unknown> }>(
    "SELECT actor, appname, details FROM audit_events WHERE type = 'token.refused' AND request_id = $1 ORDER BY id",
    [res.headers['x-request-id']],
  );
  return rows;
}

/** Key `appname`'s row, as the tests look into it. */
export async function keyRow(t: TestApp, appname: string) {
  const { rows } = await t.db.query<{ id: string; enabled: boolean; disabled_reason: string | null; credits_remaining: string | null }>(
    'SELECT id, enabled, disabled_reason, credits_remaining FROM api_keys WHERE appname = $1',
    [appname],
  );
  return rows[0];
}
