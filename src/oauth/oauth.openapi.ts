import { PATHS } from '../shared/paths';
import { BEARER, DPOP_HEADER, errors, header, jsonOrFormBody, ok, schemaRef, type OpenApiOperation, type RoutesDescription } from '../http/openapi';
import { oauthErrorBody } from '../shared/errors';
import { introspectionBody, oauthTokenOperandRequest, oauthTokenRequest, revocationBody } from './oauth.schemas';
import { discoveryResponse, introspectionResponse } from './oauth.responses';
import { oauthTokenResponse } from '../tokens/tokens.responses';

/** Client authentication by an API key: Basic of the form-urlencoded appname and appkey (client_secret_basic). */
const CLIENT_BASIC = { clientBasic: [] };

const oauthError = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers && { headers }),
  content: { 'application/json': { schema: schemaRef('OAuthError') } },
});

/** RFC 6749 §5.2: 400 for a bad request or grant, 401 invalid_client (a Basic challenge when Basic was used). */
const OAUTH_ERRORS = {
  400: oauthError(
    'invalid_request, invalid_grant, unsupported_grant_type or invalid_scope; invalid_target for a token exchange to an audience not served (RFC 8693); ' +
      'invalid_dpop_proof for a bad DPoP proof, or none or another key\'s for a DPoP-bound refresh or subject token (RFC 9449).',
  ),
  401: oauthError('invalid_client: client authentication failed.', {
    'WWW-Authenticate': { description: 'Basic, when the client authenticated with Basic.', required: false, schema: { type: 'string', pattern: '^Basic\\b' } },
  }),
};

/** RFC 7009: 200 with an empty body whatever the token was, so the route cannot probe for tokens. */
const REVOKED = { description: 'Revoked, or not a live token of ours (the same answer); no body.', headers: { 'Cache-Control': header('Cache-Control') } };

type Security = OpenApiOperation['security'];

/** An operation that takes a form or JSON body of the named schema, as every token route does. */
function formOperation(tag: string, operationId: string, summary: string, security: Security, body: string, responses: OpenApiOperation['responses']): OpenApiOperation {
  return { operationId, summary, tags: [tag], ...(security && { security }), requestBody: jsonOrFormBody(body), responses };
}

const oauthOperation = (operationId: string, summary: string, security: Security, body: string, responses: OpenApiOperation['responses']) =>
  formOperation('OAuth 2.0', operationId, summary, security, body, responses);

/** POST /oauth2/token: every grant (RFC 6749 §3.2). */
function tokenEndpointOperation(): OpenApiOperation {
  return {
    ...oauthOperation(
      'oauth2_token_post',
      'OAuth 2.0 token endpoint: password, refresh_token, client_credentials, jwt-bearer and token-exchange (RFC 8693) grants; a DPoP proof binds the tokens (RFC 9449)',
      [{}, CLIENT_BASIC],
      'OAuthTokenRequest',
      {
        200: ok('The token response (RFC 6749 §5.1; RFC 8693 §2.2.1 for a token exchange).', 'OAuthTokenResponse', { 'Cache-Control': header('Cache-Control') }),
        ...OAUTH_ERRORS,
        ...errors('PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests', 'ServiceUnavailable'),
      },
    ),
    parameters: [DPOP_HEADER],
  };
}

/** POST /oauth2/revoke: RFC 7009, by possession; an API key's client authentication is checked when sent. */
function oauthRevocationOperation(): OpenApiOperation {
  return oauthOperation('oauth2_revoke_post', 'Revoke an access or refresh token (RFC 7009); client authentication optional', [{}, CLIENT_BASIC], 'OAuthTokenOperand', {
    200: REVOKED,
    ...OAUTH_ERRORS,
    ...errors('PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'),
  });
}

/** POST /oauth2/introspect: RFC 7662, for a bearer token or an API key's client authentication granting api-keys:read. */
function oauthIntrospectionOperation(): OpenApiOperation {
  return oauthOperation(
    'oauth2_introspect_post',
    'Describe an access or refresh token (RFC 7662); needs api-keys:read, by bearer token or client authentication',
    [...BEARER, CLIENT_BASIC],
    'OAuthTokenOperand',
    {
      200: ok('The live token\'s claims, or exactly {"active": false}.', 'IntrospectionResponse', { 'Cache-Control': header('Cache-Control') }),
      400: oauthError('invalid_request, or a body that is not a form or a JSON object.'),
      401: {
        description: 'No bearer token or client authentication (a Bearer challenge), a refused bearer token, or invalid_client.',
        content: { 'application/json': { schema: { oneOf: [schemaRef('Error'), schemaRef('OAuthError')] } } },
      },
      ...errors('Forbidden', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'),
    },
  );
}

/** The service's own revocation route. */
function revocationOperation(): OpenApiOperation {
  return formOperation('Tokens', 'auth_bearer_revoke_post', 'Revoke an access or refresh token, ending its whole session (logout; RFC 7009)', undefined, 'RevocationBody', {
    200: REVOKED,
    ...errors('BadRequest', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'),
  });
}

/** RFC 7662: the caller needs a bearer token with `api-keys:read`. */
function introspectionOperation(): OpenApiOperation {
  return formOperation('Tokens', 'auth_bearer_introspect_post', 'Describe an access or refresh token (RFC 7662); needs api-keys:read', BEARER, 'IntrospectionBody', {
    200: ok('The live token\'s claims, or exactly {"active": false}.', 'IntrospectionResponse', { 'Cache-Control': header('Cache-Control') }),
    ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'),
  });
}

function discoveryOperation(operationId: string, summary: string): OpenApiOperation {
  return { operationId, summary, tags: ['Platform'], responses: { 200: ok('The issuer\'s metadata.', 'DiscoveryDocument'), ...errors() } };
}

/** The routes of oauthRouter and oauthEndpointsRouter: revocation, introspection, metadata, and the OAuth 2.0 endpoints. */
export function describeOAuthRoutes(): RoutesDescription {
  return {
    paths: {
      [PATHS.revocation]: { post: revocationOperation() },
      [PATHS.introspection]: { post: introspectionOperation() },
      [PATHS.discovery]: { get: discoveryOperation('well_known_openid_configuration_get', 'Discovery metadata (OpenID Connect Discovery 1.0)') },
      [PATHS.authorizationServerMetadata]: {
        get: discoveryOperation('well_known_oauth_authorization_server_get', 'Authorization server metadata (RFC 8414), the same document'),
      },
      [PATHS.oauthToken]: { post: tokenEndpointOperation() },
      [PATHS.oauthRevocation]: { post: oauthRevocationOperation() },
      [PATHS.oauthIntrospection]: { post: oauthIntrospectionOperation() },
    },
    requestSchemas: {
      RevocationBody: revocationBody,
      IntrospectionBody: introspectionBody,
      OAuthTokenRequest: oauthTokenRequest,
      OAuthTokenOperand: oauthTokenOperandRequest,
    },
    responseSchemas: {
      IntrospectionResponse: introspectionResponse,
      DiscoveryDocument: discoveryResponse,
      OAuthTokenResponse: oauthTokenResponse,
      OAuthError: oauthErrorBody,
    },
  };
}
