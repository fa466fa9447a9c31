import { closeInstances, startTwoInstances, type TestApp } from '../../helpers/app';
import { onSharedServerOnly } from '../../helpers/database';
import { dpopKey, type DpopKey } from '../../helpers/dpop';
import { expectError, expectOAuthError } from '../../helpers/errors';
import { createApiKey, type TestApiKey } from '../../helpers/factories';
import { basic } from '../oauth2/support';
import { clientCredentials, dpopCall, ISSUER, TOKEN_URI, tokenRequestWith } from './support';

/**
 * RFC 9449 §11.1 across a deployment: a proof is spent once on whichever instance sees it first, so
 * replaying it to another instance on the same database is refused there, at the token endpoint and
 * on this service's routes alike.
 */
onSharedServerOnly()('DPoP proofs across two instances on one database', () => {
  let a: TestApp;
  let b: TestApp;
  let client: TestApiKey;
  let key: DpopKey;

  beforeAll(async () => {
    [a, b] = await startTwoInstances();
    client = await createApiKey(a, { role: 'viewer' });
    key = await dpopKey('ES256');
  });
  afterAll(() => closeInstances(a, b));

  const withProof = (t: TestApp, proof: string) =>
    tokenRequestWith(t, { grant_type: 'client_credentials' }, { authorization: basic(client.appname, client.appkey), dpop: proof });

  it('when a token request’s proof is replayed to the other instance, then it is refused there as used before; a fresh proof is taken there', async () => {
    const proof = await key.proof('POST', TOKEN_URI);

    const first = await withProof(a, proof);
    const replayed = await withProof(b, proof);
    const fresh = await withProof(b, await key.proof('POST', TOKEN_URI));

    expect(first.status).toBe(200);
    expectOAuthError(replayed, 400, 'invalid_dpop_proof', { message: 'used before' });
    expect(fresh.status).toBe(200);
    expect(fresh.body.token_type).toBe('DPoP');
  });

  it('when a call’s proof for a bound token is replayed to the other instance, then 401 invalid_dpop_proof there', async () => {
    const token = (await clientCredentials(a, client, key)).body.access_token as string;
    const path = `/api/v1/api-keys/${client.appname}`;
    const proof = await key.proof('GET', `${ISSUER}${path}`, { accessToken: token });

    const first = await dpopCall(a, 'get', path, token, key, { proof });
    const replayed = await dpopCall(b, 'get', path, token, key, { proof });

    expect(first.status).toBe(200);
    expectError(replayed, 401, 'Unauthorized', 'used before');
    expect(replayed.headers['www-authenticate']).toMatch(/^DPoP error="invalid_dpop_proof"/);
  });
});
