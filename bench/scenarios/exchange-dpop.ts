/**
 * Issue #39's two targets: client credentials with a DPoP proof against the same grant without one
 * (the cost of checking and spending a proof and binding the token), and a token exchange against
 * its floor (verify the subject token, sign a new one, no write but the audit event).
 */
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import path from 'node:path';
import type autocannon from 'autocannon';
import { databaseUrl } from '../harness/database';
import { ROOT, startNode } from '../harness/processes';
import { ADMIN_PASSWORD, ADMIN_USERNAME, ISSUER, publicJwk, startService } from '../harness/service';
import { clientCredentialsBasic, type BenchContext, type Dataset, type Scenario } from './index';

const TOKEN_PATH = '/oauth2/token';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** Proofs signed before each run, so the load generator spends its time sending, as it does for the side without DPoP. */
const PROOFS_PER_RUN = 40_000;

const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** A client's ES256 DPoP key and `count` fresh proofs for POST `htu` (unique jti, iat now: good for 60 s). */
function proofsFor(htu: string, count: number): string[] {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const header = b64url(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } }));
  const iat = Math.floor(Date.now() / 1000);
  return Array.from({ length: count }, () => {
    const input = `${header}.${b64url(JSON.stringify({ jti: randomUUID(), htm: 'POST', htu, iat }))}`;
    return `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  });
}

/** Client credentials with client_secret_basic, each request with the next proof of one client key. */
function clientCredentialsDpop(keys: Dataset['keys']): autocannon.Request[] {
  const proofs = proofsFor(`${ISSUER}${TOKEN_PATH}`, PROOFS_PER_RUN);
  const [request] = clientCredentialsBasic(TOKEN_PATH, keys);
  let i = 0;
  return [
    {
      ...request,
      setupRequest: (req, context) => {
        const built = request!.setupRequest!(req, context) as autocannon.Request;
        // Past the signed ones (a longer run than planned) a proof is reused and refused: it shows as non-2xx.
        return { ...built, headers: { ...built.headers, dpop: proofs[i++ % proofs.length]! } };
      },
    },
  ];
}

/** A token exchange of the admin's access token for a narrower one, as a public client. */
async function exchangeRequests(baseUrl: string): Promise<autocannon.Request[]> {
  const res = await fetch(`${baseUrl}${TOKEN_PATH}`, {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({ grant_type: 'password', username: ADMIN_USERNAME, password: ADMIN_PASSWORD }),
  });
  const subject = ((await res.json()) as { access_token: string }).access_token;
  const body = new URLSearchParams({ grant_type: TOKEN_EXCHANGE, subject_token: subject, subject_token_type: ACCESS_TOKEN_TYPE, scope: 'api-keys:read' }).toString();
  return [{ method: 'POST', path: TOKEN_PATH, headers: FORM, body }];
}

function startExchangeFloor(ctx: BenchContext, publicKey: unknown) {
  return startNode(
    'floor-token-exchange',
    path.join(ROOT, 'dist', 'bench-floor', 'token-exchange.js'),
    {
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl(ctx.datasets.main.db),
      DATABASE_POOL_SIZE: String(ctx.service.poolSize),
      FLOOR_PUBLIC_JWK: JSON.stringify(publicKey),
      FLOOR_PRIVATE_KEY: ctx.floorPrivateKeyPem,
      FLOOR_ISSUER: ISSUER,
    },
    ctx.service.nodeArgs,
  );
}

export const exchangeDpopScenarios: Scenario[] = [
  {
    id: 'oauth-cc-dpop',
    title: 'oauth: client credentials with DPoP',
    ours: 'POST /oauth2/token, client_credentials, client_secret_basic and a fresh ES256 DPoP proof per request (1,000 keys)',
    floor: 'the same service and grant without DPoP',
    target: 0.8,
    async setup(ctx) {
      const data = ctx.datasets.main;
      const withDpop = await startService('ours+DPoP', data.db, ctx.service);
      const bearer = await startService('ours', data.db, ctx.service);
      return {
        ours: { label: withDpop.label, handle: withDpop, plan: () => Promise.resolve({ requests: clientCredentialsDpop(data.keys) }) },
        floor: { label: bearer.label, handle: bearer, plan: () => Promise.resolve({ requests: clientCredentialsBasic(TOKEN_PATH, data.keys) }) },
      };
    },
  },
  {
    id: 'oauth-token-exchange',
    title: 'oauth: token exchange',
    ours: 'POST /oauth2/token, token-exchange grant, an access token for a narrower one, public client',
    floor: 'ES256 verify of the subject token + one ES256 sign + one INSERT of the audit event',
    target: 0.9,
    async setup(ctx) {
      const ours = await startService('ours', ctx.datasets.main.db, ctx.service);
      const floor = await startExchangeFloor(ctx, await publicJwk(ours.baseUrl));
      // Both sides get the same subject token: the service's, which the floor verifies with the service's public key.
      const plan = async () => ({ requests: await exchangeRequests(ours.baseUrl) });
      return { ours: { label: 'ours', handle: ours, plan }, floor: { label: 'floor', handle: floor, plan } };
    },
  },
];
