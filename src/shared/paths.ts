/** Every route's path, once: the routers serve these; discovery, metrics and the app refer to them. */
export const PATHS = {
  apiKeys: '/api/v1/api-keys',
  keysVerify: '/api/v1/keys/verify',
  auditEvents: '/api/v1/audit-events',
  webhooks: '/api/v1/webhooks',
  users: '/api/v1/users',
  me: '/api/v1/me',
  apiKeyToken: '/api/v1/auth/token',
  token: '/api/auth/bearer/token',
  refresh: '/api/auth/bearer/refresh',
  revocation: '/api/auth/bearer/revoke',
  introspection: '/api/auth/bearer/introspect',
  oauthToken: '/oauth2/token',
  oauthRevocation: '/oauth2/revoke',
  oauthIntrospection: '/oauth2/introspect',
  jwks: '/.well-known/jwks.json',
  discovery: '/.well-known/openid-configuration',
  authorizationServerMetadata: '/.well-known/oauth-authorization-server',
  openApi: '/api/v1/openapi.json',
  health: '/healthz',
  readiness: '/readyz',
  metrics: '/metrics',
  console: '/console',
  /** The console's session route: the only path its refresh-token cookie is sent to. */
  consoleSession: '/console/session',
  apiReference: '/api-reference',
  home: '/',
} as const;

/** The routes that issue tokens. */
export const TOKEN_ISSUING_PATHS = [PATHS.apiKeyToken, PATHS.token, PATHS.refresh, PATHS.oauthToken] as const;
