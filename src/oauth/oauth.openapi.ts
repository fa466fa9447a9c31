import { PATHS } from '../shared/paths';
import { BEARER, errors, header, jsonOrFormBody, ok, type OpenApiOperation, type RoutesDescription } from '../http/openapi';
import { introspectionBody, revocationBody } from './oauth.schemas';
import { discoveryResponse, introspectionResponse } from './oauth.responses';

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

function discoveryOperation(): OpenApiOperation {
  return {
    operationId: 'well_known_openid_configuration_get',
    summary: 'Discovery metadata (OpenID Connect Discovery, RFC 8414)',
    tags: ['Platform'],
    responses: { 200: ok('The issuer\'s metadata.', 'DiscoveryDocument'), ...errors() },
  };
}

/** The routes of oauthRouter: revocation, introspection and discovery. */
export function describeOAuthRoutes(): RoutesDescription {
  return {
    paths: {
      [PATHS.revocation]: { post: revocationOperation() },
      [PATHS.introspection]: { post: introspectionOperation() },
      [PATHS.discovery]: { get: discoveryOperation() },
    },
    requestSchemas: { RevocationBody: revocationBody, IntrospectionBody: introspectionBody },
    responseSchemas: { IntrospectionResponse: introspectionResponse, DiscoveryDocument: discoveryResponse },
  };
}
