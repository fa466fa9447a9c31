import type { Role } from '../../../src/shared/principals';
import type { TestApp } from '../../helpers/app';
import { bearer, createApiKey, loginWithApiKey, tokenForRole } from '../../helpers/factories';

/** Shared bits for the API key integration tests: paths, expected bodies, and a few shortcuts. */

export const KEYS = '/api/v1/api-keys';
export const keyPath = (appname: string) => `${KEYS}/${appname}`;
export const regenPath = (appname: string) => `${KEYS}/${appname}/regen`;

/** An access token held by a fresh API key principal of that role. */
export async function tokenForApiKeyRole(t: TestApp, role: Role | null): Promise<string> {
  const key = await createApiKey(t, { role });
  return (await loginWithApiKey(t, key)).access_token;
}

/** GET one key as a fresh admin: the way to check what a request did (or did not) change. */
export async function readKey(t: TestApp, appname: string) {
  const admin = await tokenForRole(t, 'admin');
  return t.http().get(keyPath(appname)).set(bearer(admin));
}

/** Unix time in whole seconds. */
export const nowSeconds = () => Math.floor(Date.now() / 1000);
