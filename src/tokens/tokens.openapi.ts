import { PATHS } from '../shared/paths';
import { DPOP_HEADER, errors, header, jsonOrFormBody, ok, type OpenApiOperation, type RoutesDescription } from '../http/openapi';
import { apiKeyTokenBody, passwordTokenBody, refreshTokenBody } from './tokens.schemas';
import { tokenResponse } from './tokens.responses';

/** The three token routes differ only in the body they take. */
function tokenOperation(operationId: string, summary: string, body: string): OpenApiOperation {
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

/** The three ways tokensRouter issues a bearer access token. */
export function describeTokenRoutes(): RoutesDescription {
  return {
    paths: {
      [PATHS.apiKeyToken]: { post: tokenOperation('v1_auth_token_post', 'Token via an API key request token', 'ApiKeyTokenBody') },
      [PATHS.token]: { post: tokenOperation('auth_bearer_token_post', 'Token via user credentials', 'PasswordTokenBody') },
      [PATHS.refresh]: {
        post: { ...tokenOperation('auth_bearer_refresh_post', 'Token via a refresh token (one use; a DPoP proof binds the session to its key, and a bound one needs a proof by its key)', 'RefreshTokenBody'), parameters: [DPOP_HEADER] },
      },
    },
    requestSchemas: { ApiKeyTokenBody: apiKeyTokenBody, PasswordTokenBody: passwordTokenBody, RefreshTokenBody: refreshTokenBody },
    responseSchemas: { TokenResponse: tokenResponse },
  };
}
