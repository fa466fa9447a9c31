import { randomBytes } from 'node:crypto';
import type { Role } from '../../src/shared/principals';
import type { TokenResponse } from '../../src/tokens/tokens.responses';
import type { TestApp } from './app';
import { signRequestToken } from './tokens';
import { CLI_CONTEXT } from '../../src/shared/audit-context';

export const randomName = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`;

export interface TestUser {
  username: string;
  password: string;
}

/** A user inserted through the real service (bcrypt and all). */
export async function createUser(t: TestApp, options: { role?: Role | null; disabled?: boolean } = {}): Promise<TestUser> {
  const user = { username: randomName('user'), password: `pw-${randomBytes(8).toString('hex')}` };
  if (!options.disabled) {
    await t.services.users.add(user.username, user.password, options.role ?? null, CLI_CONTEXT);
    return user;
  }
  // Disabled before it gets its role: a disabled admin is not one the last-admin rule has to keep, so
  // this works whatever admins the app has (or lacks).
  await t.services.users.add(user.username, user.password, null, CLI_CONTEXT);
  await t.services.users.disable(user.username, CLI_CONTEXT);
  if (options.role) await t.services.users.setRole(user.username, options.role, CLI_CONTEXT);
  return user;
}

/** Logs in through POST /api/auth/bearer/token and returns the token response. */
export async function loginAs(t: TestApp, user: TestUser): Promise<TokenResponse> {
  const res = await t.http().post('/api/auth/bearer/token').type('form').send(user);
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as TokenResponse;
}

/** A fresh user of that role, logged in: returns its access token. */
export async function tokenForRole(t: TestApp, role: Role | null): Promise<string> {
  return (await loginAs(t, await createUser(t, { role }))).access_token;
}

export interface TestApiKey {
  appname: string;
  appkey: string;
}

/** A key created through POST /api/v1/api-keys by a fresh admin. */
export async function createApiKey(
  t: TestApp,
  options: { role?: Role | null; description?: string; appname?: string } = {},
): Promise<TestApiKey> {
  const admin = await tokenForRole(t, 'admin');
  const res = await t
    .http()
    .post('/api/v1/api-keys')
    .set('Authorization', `Bearer ${admin}`)
    .send({
      appname: options.appname ?? randomName('app'),
      description: options.description ?? 'test key',
      roles: options.role ? [options.role] : [],
    });
  if (res.status !== 201) throw new Error(`create key failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { appname: res.body.data.appname, appkey: res.body.data.appkey };
}

/** Exchanges a freshly signed request token for tokens (POST /api/v1/auth/token). */
export async function loginWithApiKey(t: TestApp, key: TestApiKey): Promise<TokenResponse> {
  const res = await t.http().post('/api/v1/auth/token').send({ jwt: signRequestToken(key.appname, key.appkey) });
  if (res.status !== 200) throw new Error(`api key login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as TokenResponse;
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
