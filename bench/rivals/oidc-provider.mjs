/**
 * The rival for the OAuth scenarios: node-oidc-provider (panva), the reference OAuth 2.0 / OpenID
 * Connect server for Node.js, serving only its token endpoint's client credentials grant for the
 * benchmark's API keys as clients (client_id = appname, client_secret = appkey).
 *
 * Configured like for like where the contract allows it: ES256-signed JWT access tokens with a
 * 300 s lifetime (resource indicators), and client assertions checked against replay. It keeps its
 * state in its default in-memory adapter: nothing durable is written, unlike the service (session,
 * replay record, audit event, last_login). The auth method is one per process (RIVAL_AUTH_METHOD:
 * client_secret_basic or client_secret_jwt), as oidc-provider registers one per client.
 *
 * Environment: PORT, RIVAL_ISSUER, RIVAL_AUDIENCE, RIVAL_AUTH_METHOD, RIVAL_CLIENTS (JSON
 * [{appname, appkey}]), RIVAL_PRIVATE_JWK (an ES256 private JWK). GET /healthz answers for the
 * harness's readiness check; everything else goes to the provider.
 */
import { createServer } from 'node:http';
import process from 'node:process';
import Provider from 'oidc-provider';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`oidc-provider rival: ${name} is required`);
  return value;
};

const authMethod = env('RIVAL_AUTH_METHOD');
const audience = env('RIVAL_AUDIENCE');
const clients = JSON.parse(env('RIVAL_CLIENTS')).map(({ appname, appkey }) => ({
  client_id: appname,
  client_secret: appkey,
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  token_endpoint_auth_method: authMethod,
  id_token_signed_response_alg: 'ES256',
  ...(authMethod === 'client_secret_jwt' && { token_endpoint_auth_signing_alg: 'HS256' }),
}));

const provider = new Provider(env('RIVAL_ISSUER'), {
  clients,
  jwks: { keys: [{ ...JSON.parse(env('RIVAL_PRIVATE_JWK')), alg: 'ES256', use: 'sig', kid: 'rival' }] },
  clientAuthMethods: [authMethod],
  scopes: ['api-keys:read'],
  ttl: { ClientCredentials: 300 },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => audience,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: 'api-keys:read',
        audience,
        accessTokenTTL: 300,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
});
provider.proxy = false;
const callback = provider.callback();

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  callback(req, res);
});
server.keepAliveTimeout = 5_000;
server.listen(Number(env('PORT')), '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeIdleConnections();
});
