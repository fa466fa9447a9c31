/** Every auth route's path, once: the routers serve these, discovery and metrics refer to them. */
export const AUTH_PATHS = {
  apiKeyToken: '/api/v1/auth/token',
  token: '/api/auth/bearer/token',
  refresh: '/api/auth/bearer/refresh',
  revocation: '/api/auth/bearer/revoke',
  introspection: '/api/auth/bearer/introspect',
  jwks: '/.well-known/jwks.json',
  discovery: '/.well-known/openid-configuration',
} as const;

/** The three routes that issue tokens. */
export const TOKEN_ISSUING_PATHS = [AUTH_PATHS.apiKeyToken, AUTH_PATHS.token, AUTH_PATHS.refresh] as const;
