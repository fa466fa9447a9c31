import { ERROR_STATUS, type ErrorName } from '../shared/errors';
import { PATHS } from '../shared/paths';
import { errors, header, inlineSchema, ok, type Json, type JsonSchema, type OpenApiPathItem, type RoutesDescription } from '../http/openapi';
import { describeApiKeyRoutes } from '../api-keys/api-keys.openapi';
import { describeAuditEventRoutes } from '../audit-events/audit-events.openapi';
import { describeWebhookRoutes } from '../webhooks/webhooks.openapi';
import { describeUserRoutes } from '../users/users.openapi';
import { describeConsoleSessionRoutes } from '../console-session/console-session.openapi';
import { describeTokenRoutes } from '../tokens/tokens.openapi';
import { describeOAuthRoutes } from '../oauth/oauth.openapi';
import { describeJwksRoutes } from '../signing-keys/jwks.openapi';
import { describeHealthRoutes } from '../health/health.openapi';
import { describeMetricsRoutes } from '../metrics/metrics.openapi';
import { describeHomeRoutes } from '../home/home.openapi';
import { describeVerifyRoutes } from '../verification/verify.openapi';
import { errorBody, errorBodyOf } from './error.responses';
import { componentSchemas, mergeDistinct, openApiDocumentOutline } from './openapi.schemas';

export type { OpenApiOperation } from '../http/openapi';

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, OpenApiPathItem>;
  components: Json & { schemas: Record<string, JsonSchema>; responses: Record<string, Json>; headers: Record<string, Json> };
}

const WHEN: Record<ErrorName, string> = {
  BadRequest: 'Malformed JSON body, unknown field, or a value that fails validation.',
  Unauthorized: 'Access token or credential missing, invalid, expired or revoked.',
  Forbidden: 'The caller\'s role does not allow this operation.',
  NotFound: 'No such resource: an API key with this appname, a user with this username, a webhook endpoint with this id.',
  MethodNotAllowed: 'The path exists but not with this method.',
  Conflict: 'The resource conflicts with its current state: a name taken (an API key or user of that name exists), a change that would leave no enabled admin, a webhook endpoint disabled or changed meanwhile.',
  PayloadTooLarge: 'Request body over 64 KiB.',
  UnsupportedMediaType: 'A request body of a media type this route does not take.',
  TooManyRequests: 'Rate limit exceeded.',
  InternalServerError: 'Unexpected service fault; no detail is revealed.',
  ServiceUnavailable: 'The database is unreachable.',
};

const ERROR_HEADERS: Partial<Record<ErrorName, Json>> = {
  Unauthorized: { 'WWW-Authenticate': header('WWW-Authenticate') },
  MethodNotAllowed: { Allow: header('Allow') },
  TooManyRequests: { 'Retry-After': header('Retry-After') },
};

const jsonContent = (schema: Json) => ({ content: { 'application/json': { schema } } });

/** The shared error responses that `errors(...)` points at, each with its name and status fixed in the body. */
function errorResponses(): Record<string, Json> {
  const names = Object.keys(ERROR_STATUS) as ErrorName[];
  const responses: Record<string, Json> = Object.fromEntries(
    names.map((name) => {
      const headers = ERROR_HEADERS[name];
      return [name, { description: WHEN[name], ...(headers && { headers }), ...jsonContent(inlineSchema(errorBodyOf(name), 'output')) }];
    }),
  );
  responses.UnexpectedError = { description: 'Any other error, in the same body.', ...jsonContent({ $ref: '#/components/schemas/Error' }) };
  return responses;
}

const HEADERS = {
  'WWW-Authenticate': {
    description:
      'RFC 6750 challenge; error="invalid_token" when a token was sent and refused. In the DPoP scheme (RFC 9449 §7.1) when the token came as ' +
      '`Authorization: DPoP`, with error="invalid_dpop_proof" for a bad proof; a DPoP-bound token sent as a bearer token gets a DPoP challenge besides.',
    required: true,
    schema: { type: 'string', pattern: '^(Bearer|DPoP)\\b' },
  },
  Allow: { description: 'The methods this path takes.', required: true, schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait before retrying.', required: true, schema: { type: 'string', pattern: '^\\d+$' } },
  'Cache-Control': { description: 'Token responses are never cached.', required: true, schema: { type: 'string', const: 'no-store' } },
};

/** openApiRouter's own route; `Error` is named here because UnexpectedError, on every operation, refers to it. */
function describeOpenApiRoutes(): RoutesDescription {
  return {
    paths: {
      [PATHS.openApi]: {
        get: { operationId: 'v1_openapi_get', summary: 'This document', tags: ['Platform'], responses: { 200: ok('The OpenAPI 3.1 document.', 'OpenApiDocument'), ...errors() } },
      },
    },
    responseSchemas: { Error: errorBody, OpenApiDocument: openApiDocumentOutline },
  };
}

export interface OpenApiOptions {
  /** GET /metrics is served on the main port: 'open', or 'admin' (production: an admin's bearer token). */
  metrics?: 'open' | 'admin';
}

/** The OpenAPI 3.1 description of the service: every router's own description, with the parts they share. */
export function buildOpenApiDocument(issuer: string, options: OpenApiOptions = {}): OpenApiDocument {
  const described = [
    describeApiKeyRoutes(),
    describeVerifyRoutes(),
    describeAuditEventRoutes(),
    describeWebhookRoutes(),
    describeUserRoutes(),
    describeTokenRoutes(),
    describeConsoleSessionRoutes(),
    describeOAuthRoutes(),
    describeJwksRoutes(),
    describeHealthRoutes(),
    describeOpenApiRoutes(),
    describeHomeRoutes(),
    ...(options.metrics ? [describeMetricsRoutes(options.metrics === 'admin')] : []),
  ];
  return {
    openapi: '3.1.0',
    info: {
      title: 'API Key Management and Token Issuance Service',
      version: '1.0',
      description: 'Manages API keys and issues bearer access tokens (JWT, ES256; public keys at /.well-known/jwks.json).',
    },
    servers: [{ url: issuer }],
    tags: [
      { name: 'API keys', description: 'The API key resource; every operation needs a bearer access token.' },
      { name: 'Audit', description: 'The append-only trail of security events; admins only.' },
      { name: 'Webhooks', description: 'Endpoints that receive the audit trail\'s events as they happen, signed per Standard Webhooks; admins only.' },
      { name: 'Users', description: 'The caller (/api/v1/me), a user\'s own password, and the users themselves (admins only).' },
      { name: 'Tokens', description: 'The service\'s own three ways to obtain a bearer access token, and revoking and introspecting tokens.' },
      {
        name: 'OAuth 2.0',
        description:
          'The standard OAuth 2.0 endpoints: one token endpoint for every grant (RFC 6749) with token exchange (RFC 8693) and DPoP-bound tokens (RFC 9449), revocation (RFC 7009), introspection (RFC 7662).',
      },
      { name: 'Platform', description: 'Health, signing keys, discovery, this document and the front door; no token needed.' },
      { name: 'Console', description: 'The admin console\'s session route (served while CONSOLE_ENABLED): its refresh token in a cookie, for the console\'s own page only.' },
    ],
    paths: mergeDistinct('path', described.map((d) => d.paths)),
    components: {
      schemas: componentSchemas(described),
      parameters: mergeDistinct('parameter', described.map((d) => d.parameters)),
      responses: errorResponses(),
      headers: HEADERS,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        dpopAuth: {
          type: 'http',
          scheme: 'dpop',
          description: 'A DPoP-bound access token (RFC 9449 §7.1): `Authorization: DPoP <token>` with a `DPoP` header holding a proof by its key that carries `ath`.',
        },
        clientBasic: { type: 'http', scheme: 'basic', description: 'An API key as an OAuth client: the form-urlencoded appname and appkey (client_secret_basic).' },
        consoleSessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: '__Secure-console_session',
          description: 'The console\'s refresh token, HttpOnly, SameSite=Strict, Path=/console/session; named console_session, without Secure, when the console is served over plain HTTP on a loopback address.',
        },
      },
    },
  };
}
