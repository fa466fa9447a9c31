/**
 * Issue 22: resource servers built on the common libraries (jose, express-jwt + jwks-rsa,
 * express-oauth2-jwt-bearer, passport-jwt + jwks-rsa), unmodified and configured with nothing but the
 * service's jwks_uri, issuer and audience, take its access tokens and refuse its ID and refresh tokens.
 *
 * The service runs with an AUDIENCE of its own (not the issuer), as a deployment with one API behind
 * it would. The resource servers run in one plain Node process (resource-servers/app.mjs): jwks-rsa 4
 * requires the ESM-only jose 6, which Node loads but Jest's CommonJS runtime does not.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { INTEROP_DIR, claimsOf, startInteropService, type InteropService } from './support/service';

const AUDIENCE = 'https://api.interop.example';

/** Each library's route; the three values each is configured with are the same. */
const LIBRARIES = [
  ['jose', '/jose'],
  ['express-jwt + jwks-rsa', '/express-jwt'],
  ['express-oauth2-jwt-bearer', '/express-oauth2-jwt-bearer'],
  ['express-oauth2-jwt-bearer (issuerBaseURL discovery)', '/express-oauth2-jwt-bearer/discovery'],
  ['passport-jwt + jwks-rsa passportJwtSecret', '/passport-jwt'],
] as const;

interface Tokens {
  access_token: string;
  refresh_token?: string;
  id_token?: string;
}

let service: InteropService;
let resourceServers: ChildProcess | undefined;
let resourceBase: string;
let user: Tokens;
let apiKey: Tokens;

async function token(parameters: Record<string, string>, authorization?: string): Promise<Tokens> {
  const res = await fetch(`${service.issuer}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
    body: new URLSearchParams(parameters),
  });
  const body = (await res.json()) as Tokens;
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** Starts resource-servers/app.mjs and resolves with its base URL once it prints its port. */
function startResourceServers(env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(INTEROP_DIR, 'resource-servers', 'app.mjs')], {
      cwd: INTEROP_DIR,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    resourceServers = child;
    let output = '';
    const timer = setTimeout(() => reject(new Error(`the resource servers did not start within 15 s:\n${output}`)), 15_000);
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      output += text;
      const match = /\{"port":(\d+)\}/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${match[1]}`);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the resource servers exited (code ${code}):\n${output}`));
    });
  });
}

beforeAll(async () => {
  service = await startInteropService({ AUDIENCE, PUBLIC_CLIENT_IDS: 'resource-cli' });
  const key = await service.createApiKey('resource-client', 'viewer');
  user = await token({ grant_type: 'password', ...service.admin, scope: 'openid api-keys:read', client_id: 'resource-cli' });
  apiKey = await token({ grant_type: 'client_credentials' }, `Basic ${Buffer.from(`${key.appname}:${key.appkey}`).toString('base64')}`);
  resourceBase = await startResourceServers({ RS_ISSUER: service.issuer, RS_AUDIENCE: AUDIENCE, RS_JWKS_URI: `${service.issuer}/.well-known/jwks.json` });
}, 60_000);

afterAll(async () => {
  if (resourceServers && resourceServers.exitCode === null) {
    const exited = new Promise((resolve) => resourceServers?.once('exit', resolve));
    resourceServers.kill('SIGKILL');
    await exited;
  }
  await service?.cleanup();
});

async function call(route: string, bearer: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${resourceBase}${route}`, { headers: { authorization: `Bearer ${bearer}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

it('the tokens under test: access tokens for AUDIENCE, the ID token for its client', () => {
  expect(claimsOf(user.access_token)).toEqual(expect.objectContaining({ iss: service.issuer, aud: AUDIENCE, client_id: 'resource-cli', principal_type: 'user' }));
  expect(claimsOf(apiKey.access_token)).toEqual(expect.objectContaining({ iss: service.issuer, aud: AUDIENCE, client_id: 'resource-client', principal_type: 'api_key' }));
  expect(claimsOf(user.id_token ?? '')).toEqual(expect.objectContaining({ iss: service.issuer, aud: 'resource-cli' }));
});

describe.each(LIBRARIES)('%s', (_library, route) => {
  it('when a user sends its access token, then it is accepted with its claims', async () => {
    const res = await call(route, user.access_token);

    expect(res).toEqual({ status: 200, body: expect.objectContaining({ sub: claimsOf(user.access_token).sub, client_id: 'resource-cli', scope: 'openid api-keys:read', aud: AUDIENCE }) });
  });

  it('when an API key sends its client-credentials access token, then it is accepted', async () => {
    const res = await call(route, apiKey.access_token);

    expect(res).toEqual({ status: 200, body: expect.objectContaining({ client_id: 'resource-client', aud: AUDIENCE }) });
  });

  it('when an ID token is sent as the bearer, then 401 for its audience', async () => {
    const res = await call(route, user.id_token ?? '');

    expect(res.status).toBe(401);
    expect(String(res.body.message)).toMatch(/aud/i);
  });

  it('when a refresh token is sent as the bearer, then 401', async () => {
    const res = await call(route, user.refresh_token ?? '');

    expect(res.status).toBe(401);
  });
});

// In its opt-in RFC 9068 mode (strict: true) the library also wants typ at+jwt and client_id, iat, jti.
it('when express-oauth2-jwt-bearer checks in its strict RFC 9068 mode, then the access token is accepted', async () => {
  const res = await call('/express-oauth2-jwt-bearer/strict', user.access_token);

  expect(res.status).toBe(200);
});
