import type { TestApp } from '../../helpers/app';
import type { DpopKey, ProofOptions } from '../../helpers/dpop';
import { basic, OAUTH2 } from '../oauth2/support';
import type { TestApiKey } from '../../helpers/factories';

/** The issuer the test apps run under: the `htu` of a proof is this and the path (the URI clients are told). */
export const ISSUER = 'http://issuer.test';
export const TOKEN_URI = `${ISSUER}${OAUTH2.token}`;
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** POST /oauth2/token as a form, with the given DPoP header field(s) and Authorization. */
export function tokenRequestWith(t: TestApp, body: Record<string, string>, options: { dpop?: string | string[]; authorization?: string } = {}) {
  let req = t.http().post(OAUTH2.token).type('form');
  if (options.authorization) req = req.set('Authorization', options.authorization);
  // An array goes as that many DPoP header lines.
  if (options.dpop !== undefined) req = req.set('DPoP', options.dpop as string);
  return req.send(body);
}

/** Client credentials with client_secret_basic and, when `key` is given, a fresh proof by it for the token endpoint. */
export async function clientCredentials(t: TestApp, client: TestApiKey, key?: DpopKey, options: ProofOptions & { scope?: string } = {}) {
  const { scope, ...proofOptions } = options;
  return tokenRequestWith(t, { grant_type: 'client_credentials', ...(scope && { scope }) }, {
    authorization: basic(client.appname, client.appkey),
    dpop: key && (await key.proof('POST', TOKEN_URI, proofOptions)),
  });
}

/** A call of this service's own routes with `Authorization: DPoP <token>` and a proof by `key` (with ath) unless `proof` says otherwise. */
export async function dpopCall(
  t: TestApp,
  method: 'get' | 'post',
  path: string,
  accessToken: string,
  key: DpopKey,
  options: ProofOptions & { proof?: string | null; scheme?: string; body?: object; htu?: string } = {},
) {
  const { proof, scheme = 'DPoP', body, htu, ...proofOptions } = options;
  const header = proof === undefined ? await key.proof(method.toUpperCase(), htu ?? `${ISSUER}${path.split('?')[0]}`, { accessToken, ...proofOptions }) : proof;
  let req = t.http()[method](path).set('Authorization', `${scheme} ${accessToken}`);
  if (header !== null) req = req.set('DPoP', header);
  return body === undefined ? req : req.send(body);
}

/** The WWW-Authenticate challenge of a refused DPoP call (RFC 9449 §7.1). */
export const dpopChallenge = (error: 'invalid_token' | 'invalid_dpop_proof') =>
  expect.stringMatching(new RegExp(`^DPoP error="${error}", error_description="[^"]+", algs="ES256 EdDSA Ed25519 RS256"$`));
