import { startTestApp, type TestApp } from '../../helpers/app';
import { createUser, loginAs, type TestUser } from '../../helpers/factories';
import { claimsOf, unsignedToken } from '../../helpers/tokens';
import { callProtected, expectError, expectInvalidToken, forgeHs256, headerOf, publicKeyFor, signAsymmetric, sleep } from './support';
import { CLI_CONTEXT } from '../../../src/shared/audit-context';

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

  it('when no token is sent, then 401 with a bare Bearer challenge', async () => {
    const res = await t.http().get('/api/v1/api-keys');

    expectError(res, 401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('when a refresh token is used as a bearer, then 401 with error="invalid_token"', async () => {
    const login = await loginAs(t, user);

    const res = await callProtected(t, login.refresh_token);

    expectInvalidToken(res);
  });

  it('when an ID token is used as a bearer, then 401 with error="invalid_token"', async () => {
    const login = await loginAs(t, user);

    const res = await callProtected(t, login.id_token);

    expectInvalidToken(res);
  });

  it('when an unsigned (alg none) copy of a real access token is sent, then 401', async () => {
    const login = await loginAs(t, user);

    const res = await callProtected(t, unsignedToken(claimsOf(login.access_token)));

    expectInvalidToken(res);
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

  it('when an access token is signed ES256 by a key the service does not own, under its kid, then 401', async () => {
    const login = await loginAs(t, user);
    const { kid } = headerOf(login.access_token) as { kid: string };

    const res = await callProtected(t, signAsymmetric(claimsOf(login.access_token), 'ES256', kid));

    expectInvalidToken(res);
  });

  it('when the access token’s claims are altered under the original signature, then 401', async () => {
    const login = await loginAs(t, user);
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

describe('bearer middleware with a short access-token lifetime', () => {
  const ACCESS_TOKEN_TTL = 3;
  let t: TestApp;

  beforeAll(async () => {
    // Whole seconds, floored at issue: a 3 s token is good for 2–3 s, enough for the first call
    // on a loaded machine (a 1 s token could expire within milliseconds of its issue).
    t = await startTestApp({ ACCESS_TOKEN_TTL: String(ACCESS_TOKEN_TTL) });
  });
  afterAll(() => t.close());

  it('when the access token has expired, then 401 with error="invalid_token"', async () => {
    const login = await loginAs(t, await createUser(t, { role: 'viewer' }));
    const issuedBy = Date.now();
    expect((await callProtected(t, login.access_token)).status).toBe(200);

    await sleep(issuedBy + ACCESS_TOKEN_TTL * 1000 + 100 - Date.now());
    const res = await callProtected(t, login.access_token);

    expectInvalidToken(res);
  });
});
