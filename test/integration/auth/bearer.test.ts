import { startTestApp, type TestApp } from '../../helpers/app';
import { createUser, loginAs, type TestUser } from '../../helpers/factories';
import { claimsOf } from '../../helpers/tokens';
import { expectInvalidToken } from '../../helpers/errors';
import { callProtected, forgeHs256, headerOf, publicKeyFor } from './support';
import { CLI_CONTEXT } from '../../../src/shared/audit-context';

// Missing, expired, foreign-signed, unsigned, refresh and ID tokens, and too low a role, are refused on
// every bearer route by test/integration/security/bearer-routes.test.ts; here, what is particular to
// the middleware: algorithm confusion, altered claims, and principals that change after login.
describe('bearer middleware', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    user = await createUser(t, { role: 'viewer' });
  });
  afterAll(() => t.close());

  it('when a valid access token is sent, then the protected route answers 200', async () => {
    const login = await loginAs(t, user);

    const res = await callProtected(t, login.access_token);

    expect(res.status).toBe(200);
  });

  it('when an access token is forged with HS256 using the published public key as the secret, then 401', async () => {
    const login = await loginAs(t, user);
    const { kid } = headerOf(login.access_token) as { kid: string };
    const publicKey = await publicKeyFor(t, kid);
    const claims = claimsOf(login.access_token);

    const pem = await callProtected(t, forgeHs256({ kid }, claims, publicKey.export({ format: 'pem', type: 'spki' })));
    const der = await callProtected(t, forgeHs256({ kid }, claims, publicKey.export({ format: 'der', type: 'spki' })));

    expectInvalidToken(pem);
    expectInvalidToken(der);
  });

  it('when the access token’s claims are altered under the original signature, then 401, though the original was accepted', async () => {
    const login = await loginAs(t, user);
    expect((await callProtected(t, login.access_token)).status).toBe(200);
    const [header, , signature] = login.access_token.split('.');
    const payload = Buffer.from(JSON.stringify({ ...claimsOf(login.access_token), roles: ['admin'] })).toString('base64url');

    const res = await callProtected(t, `${header}.${payload}.${signature}`);

    expectInvalidToken(res);
  });

  it('when the user is disabled after logging in, then their access token is 401 on the next call', async () => {
    const doomed = await createUser(t, { role: 'viewer' });
    const login = await loginAs(t, doomed);
    expect((await callProtected(t, login.access_token)).status).toBe(200);

    await t.services.users.disable(doomed.username, CLI_CONTEXT);
    const res = await callProtected(t, login.access_token);

    expectInvalidToken(res);
  });

  it('when the user is deleted after logging in, then their access token is 401', async () => {
    const doomed = await createUser(t, { role: 'viewer' });
    const login = await loginAs(t, doomed);
    expect((await callProtected(t, login.access_token)).status).toBe(200);

    await t.services.users.delete(doomed.username, CLI_CONTEXT);
    const res = await callProtected(t, login.access_token);

    expectInvalidToken(res);
  });

  it('when one user is disabled, then another user’s token keeps working', async () => {
    const doomed = await createUser(t, { role: 'viewer' });
    const bystander = await loginAs(t, user);
    await t.services.users.disable(doomed.username, CLI_CONTEXT);

    const res = await callProtected(t, bystander.access_token);

    expect(res.status).toBe(200);
  });
});

// The service checks a token's signature once and remembers the verdict (docs/performance.md, "read");
// what a token says is still judged on every call.
describe('bearer middleware, for a token it has accepted before', () => {
  const TTL_SECONDS = 2;
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ ACCESS_TOKEN_TTL: String(TTL_SECONDS), CLOCK_TOLERANCE: '0' });
  });
  afterAll(() => t.close());

  it('when the token has expired since it was accepted, then 401', async () => {
    const login = await loginAs(t, await createUser(t, { role: 'viewer' }));
    expect((await callProtected(t, login.access_token)).status).toBe(200);

    await sleep((claimsOf(login.access_token).exp as number) * 1000 + 100 - Date.now());
    const res = await callProtected(t, login.access_token);

    expectInvalidToken(res);
  });
});

describe('bearer middleware, for a token it has accepted before, once its key has left the key set', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('when the key that signed the token has left the key set since, then 401', async () => {
    const login = await loginAs(t, await createUser(t, { role: 'viewer' }));
    expect((await callProtected(t, login.access_token)).status).toBe(200);
    const { kid } = headerOf(login.access_token) as { kid: string };

    await t.services.signingKeys.rotate();
    // As if the rotation were older than any token of that key can live: the key is no longer published.
    await t.db.query("UPDATE signing_keys SET retired_at = now() - interval '1 day' WHERE kid = $1", [kid]);
    await t.services.signingKeys.reload();
    const res = await callProtected(t, login.access_token);

    expectInvalidToken(res);
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
