import { ERROR_STATUS, type ErrorName } from '../shared/errors';
import { errorBodyOf } from './error.responses';
import {
  appnameParameter,
  auditQueryParameters,
  componentSchemas,
  inlineSchema,
  listQueryParameters,
  regenQueryParameters,
  schemaRef,
  type JsonSchema,
  type SchemaName,
} from './openapi.schemas';

type Json = Record<string, unknown>;

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  tags: string[];
  security?: Record<string, string[]>[];
  parameters?: Json[];
  requestBody?: Json;
  responses: Record<string, Json>;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, { parameters?: Json[] } & Partial<Record<'get' | 'post' | 'put' | 'delete', OpenApiOperation>>>;
  components: Json & { schemas: Record<SchemaName, JsonSchema>; responses: Record<string, Json>; headers: Record<string, Json> };
}

const JSON_MEDIA = 'application/json';
const FORM_MEDIA = 'application/x-www-form-urlencoded';
const BEARER = [{ bearerAuth: [] }];

const json = (schema: Json) => ({ content: { [JSON_MEDIA]: { schema } } });
const ok = (description: string, schema: SchemaName, headers?: Json) => ({ description, ...(headers && { headers }), ...json(schemaRef(schema)) });
const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Error statuses by name, each pointing at its shared response; `default` stands for any server fault. */
function errors(...names: ErrorName[]): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const name of names) out[String(ERROR_STATUS[name])] = { $ref: `#/components/responses/${name}` };
  out.default = { $ref: '#/components/responses/UnexpectedError' };
  return out;
}

const WHEN: Record<ErrorName, string> = {
  BadRequest: 'Malformed JSON body, unknown field, or a value that fails validation.',
  Unauthorized: 'Access token or credential missing, invalid, expired or revoked.',
  Forbidden: 'The caller\'s role does not allow this operation.',
  NotFound: 'No API key with this appname.',
  MethodNotAllowed: 'The path exists but not with this method.',
  Conflict: 'An API key with this appname already exists.',
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

function errorResponses(): Record<string, Json> {
  const names = Object.keys(ERROR_STATUS) as ErrorName[];
  const responses: Record<string, Json> = Object.fromEntries(
    names.map((name) => {
      const headers = ERROR_HEADERS[name];
      return [name, { description: WHEN[name], ...(headers && { headers }), ...json(inlineSchema(errorBodyOf(name), 'output')) }];
    }),
  );
  responses.UnexpectedError = { description: 'Any other error, in the same body.', ...json(schemaRef('Error')) };
  return responses;
}

const HEADERS = {
  'WWW-Authenticate': { description: 'RFC 6750 challenge; error="invalid_token" when a token was sent and refused.', required: true, schema: { type: 'string', pattern: '^Bearer\\b' } },
  Allow: { description: 'The methods this path takes.', required: true, schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait before retrying.', required: true, schema: { type: 'string', pattern: '^\\d+$' } },
  'Cache-Control': { description: 'Token responses are never cached.', required: true, schema: { type: 'string', const: 'no-store' } },
};

/** A key operation: bearer token required, authenticated before anything else. */
function keyOperation(operationId: string, summary: string, rest: Omit<OpenApiOperation, 'operationId' | 'summary' | 'tags' | 'security'>): OpenApiOperation {
  return { operationId, summary, tags: ['API keys'], security: BEARER, ...rest };
}

function jsonBody(schema: SchemaName, description: string) {
  return { required: true, description, ...json(schemaRef(schema)) };
}

/** Token routes take JSON or a form, with the same fields. */
function jsonOrFormBody(body: SchemaName) {
  return { required: true, content: { [JSON_MEDIA]: { schema: schemaRef(body) }, [FORM_MEDIA]: { schema: schemaRef(body) } } };
}

function tokenOperation(operationId: string, summary: string, body: SchemaName): OpenApiOperation {
  return {
    operationId,
    summary,
    tags: ['Tokens'],
    requestBody: jsonOrFormBody(body),
    responses: {
      200: ok('The token response.', 'TokenResponse', { 'Cache-Control': header('Cache-Control') }),
      ...errors('BadRequest', 'Unauthorized', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'),
    },
  };
}

/** RFC 7009: 200 with an empty body whatever the token was, so the route cannot probe for tokens. */
function revocationOperation(): OpenApiOperation {
  return {
    operationId: 'auth_bearer_revoke_post',
    summary: 'Revoke an access or refresh token, ending its whole session (logout; RFC 7009)',
    tags: ['Tokens'],
    requestBody: jsonOrFormBody('RevocationBody'),
    responses: {
      200: { description: 'Revoked, or not a live token of ours (the same answer); no body.', headers: { 'Cache-Control': header('Cache-Control') } },
      ...errors('BadRequest', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'),
    },
  };
}

/** RFC 7662: the caller needs a bearer token with `api-keys:read`. */
function introspectionOperation(): OpenApiOperation {
  return {
    operationId: 'auth_bearer_introspect_post',
    summary: 'Describe an access or refresh token (RFC 7662); needs api-keys:read',
    tags: ['Tokens'],
    security: BEARER,
    requestBody: jsonOrFormBody('IntrospectionBody'),
    responses: {
      200: ok('The live token\'s claims, or exactly {"active": false}.', 'IntrospectionResponse', { 'Cache-Control': header('Cache-Control') }),
      ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'),
    },
  };
}

function platformOperation(operationId: string, summary: string, responses: Record<string, Json>): OpenApiOperation {
  return { operationId, summary, tags: ['Platform'], responses };
}

/** GET /metrics, listed only where it is served: METRICS_ENABLED=true and METRICS_PORT unset. */
function metricsOperation(): OpenApiOperation {
  return platformOperation('metrics_get', 'Prometheus metrics (present when METRICS_ENABLED=true and METRICS_PORT is unset)', {
    200: {
      description: 'Every metric in the Prometheus text exposition format (Content-Type: text/plain; version=0.0.4; charset=utf-8).',
      content: { 'text/plain': { schema: { type: 'string' } } },
    },
    ...errors(),
  });
}

export interface OpenApiOptions {
  /** GET /metrics is served on the main port. */
  metrics?: boolean;
}

/** The OpenAPI 3.1 description of the service, generated from the zod schemas it validates and answers with. */
export function buildOpenApiDocument(issuer: string, options: OpenApiOptions = {}): OpenApiDocument {
  // Operations that read no body still refuse one that is not JSON (415), malformed (400) or too large (413).
  const bodilessErrors = ['BadRequest', 'Unauthorized', 'Forbidden', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'] as const;
  const keyBodyErrors = [...bodilessErrors, 'NotFound'] as const;
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
      { name: 'Tokens', description: 'The three ways to obtain a bearer access token, and revoking and introspecting tokens.' },
      { name: 'Platform', description: 'Health, signing keys, discovery and this document; no token needed.' },
    ],
    paths: {
      '/api/v1/api-keys': {
        get: keyOperation('v1_api_keys_get', 'List API keys, ordered by appname', {
          parameters: listQueryParameters(),
          responses: { 200: ok('A page of API keys.', 'ApiKeyListEnvelope'), ...errors(...bodilessErrors) },
        }),
        post: keyOperation('v1_api_keys_post', 'Create an API key', {
          requestBody: jsonBody('CreateApiKeyBody', 'The new key; the service generates its appkey.'),
          responses: {
            201: ok('The key, with its appkey (shown only now).', 'ApiKeyWithAppkeyEnvelope'),
            ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'Conflict', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'),
          },
        }),
      },
      '/api/v1/api-keys/{appname}': {
        parameters: [{ $ref: '#/components/parameters/Appname' }],
        get: keyOperation('v1_api_keys_appname_get', 'Get an API key', {
          responses: { 200: ok('The key.', 'ApiKeyEnvelope'), ...errors(...bodilessErrors, 'NotFound') },
        }),
        put: keyOperation('v1_api_keys_appname_put', 'Update an API key (replaces description and roles)', {
          requestBody: jsonBody('UpdateApiKeyBody', 'The complete new contents; omitted fields become empty.'),
          responses: { 200: ok('The updated key.', 'ApiKeyEnvelope'), ...errors(...keyBodyErrors) },
        }),
        delete: keyOperation('v1_api_keys_appname_delete', 'Delete an API key and revoke its sessions', {
          responses: { 204: { description: 'Deleted; no body.' }, ...errors(...bodilessErrors, 'NotFound') },
        }),
      },
      '/api/v1/api-keys/{appname}/regen': {
        parameters: [{ $ref: '#/components/parameters/Appname' }],
        put: keyOperation('v1_api_keys_appname_regen_put', 'Regenerate an API key\'s appkey (and replace its contents)', {
          parameters: regenQueryParameters(),
          requestBody: jsonBody('UpdateApiKeyBody', 'The complete new contents; omitted fields become empty.'),
          responses: { 200: ok('The key, with its new appkey; the old one and its sessions stop working now, or when grace_seconds have passed.', 'ApiKeyWithAppkeyEnvelope'), ...errors(...keyBodyErrors) },
        }),
      },
      '/api/v1/audit-events': {
        get: {
          operationId: 'v1_audit_events_get',
          summary: 'Page through the audit trail, newest first (admin only; read-only)',
          tags: ['Audit'],
          security: BEARER,
          parameters: auditQueryParameters(),
          responses: {
            200: ok('A page of audit events, newest first.', 'AuditEventListEnvelope'),
            ...errors(...bodilessErrors),
          },
        },
      },
      '/api/v1/auth/token': { post: tokenOperation('v1_auth_token_post', 'Token via an API key request token', 'ApiKeyTokenBody') },
      '/api/auth/bearer/token': { post: tokenOperation('auth_bearer_token_post', 'Token via user credentials', 'PasswordTokenBody') },
      '/api/auth/bearer/refresh': { post: tokenOperation('auth_bearer_refresh_post', 'Token via a refresh token (one use)', 'RefreshTokenBody') },
      '/api/auth/bearer/revoke': { post: revocationOperation() },
      '/api/auth/bearer/introspect': { post: introspectionOperation() },
      '/.well-known/openid-configuration': {
        get: platformOperation('well_known_openid_configuration_get', 'Discovery metadata (OpenID Connect Discovery, RFC 8414)', {
          200: ok('The issuer\'s metadata.', 'DiscoveryDocument'),
          ...errors(),
        }),
      },
      '/.well-known/jwks.json': {
        get: platformOperation('well_known_jwks_get', 'Public signing keys (JWK Set)', { 200: ok('The JWK Set.', 'JwkSet'), ...errors() }),
      },
      '/healthz': { get: platformOperation('healthz_get', 'Liveness', { 200: ok('The process answers.', 'HealthStatus'), ...errors() }) },
      '/readyz': {
        get: platformOperation('readyz_get', 'Readiness', { 200: ok('The database answers.', 'HealthStatus'), ...errors('ServiceUnavailable') }),
      },
      '/api/v1/openapi.json': {
        get: platformOperation('v1_openapi_get', 'This document', {
          200: ok('The OpenAPI 3.1 document.', 'OpenApiDocument'),
          ...errors(),
        }),
      },
      ...(options.metrics && { '/metrics': { get: metricsOperation() } }),
    },
    components: {
      schemas: componentSchemas(),
      parameters: { Appname: appnameParameter() },
      responses: errorResponses(),
      headers: HEADERS,
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
  };
}
