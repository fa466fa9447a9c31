import { PATHS } from '../shared/paths';
import { BEARER, errors, header, jsonBody, ok, type RoutesDescription } from '../http/openapi';
import { verifyKeyBody } from './verify.schemas';
import { verifyKeyResult } from './verify.responses';

/** POST /api/v1/keys/verify. */
export function describeVerifyRoutes(): RoutesDescription {
  return {
    paths: {
      [PATHS.keysVerify]: {
        post: {
          operationId: 'v1_keys_verify_post',
          summary: 'Verify an API key presented to your own API (codes in order: NOT_FOUND, DISABLED, EXPIRED, ADDRESS_NOT_ALLOWED, INSUFFICIENT_PERMISSIONS, RATE_LIMITED, USAGE_EXCEEDED, VALID)',
          tags: ['API keys'],
          security: BEARER,
          requestBody: jsonBody('VerifyKeyBody', 'The key as presented to your API, and what the call needs.'),
          responses: {
            200: ok('The verdict (200 for every well-formed request, whatever the code).', 'VerifyKeyResult', { 'Cache-Control': header('Cache-Control') }),
            ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'),
          },
        },
      },
    },
    requestSchemas: { VerifyKeyBody: verifyKeyBody },
    responseSchemas: { VerifyKeyResult: verifyKeyResult },
  };
}
