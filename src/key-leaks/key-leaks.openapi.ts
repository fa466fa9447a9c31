import { PATHS } from '../shared/paths';
import { errors, header, jsonBody, jsonOrFormBody, ok, type RoutesDescription } from '../http/openapi';
import { secretScanningReport, selfRevocationBody, MAX_REPORTED_TOKENS } from './key-leaks.schemas';
import { secretScanningAnswer, selfRevocationResponse } from './key-leaks.responses';

const TAG = 'Key leaks';

const GITHUB_HEADERS = [
  {
    name: 'Github-Public-Key-Identifier',
    in: 'header',
    required: true,
    description: 'Which of the keys listed at SECRET_SCANNING_KEYS_URL signed the report.',
    schema: { type: 'string' },
  },
  {
    name: 'Github-Public-Key-Signature',
    in: 'header',
    required: true,
    description: 'Base64 of the DER-encoded ECDSA P-256 SHA-256 signature of the raw request body.',
    schema: { type: 'string' },
  },
];

/** The two routes of keyLeaksRouter. */
export function describeKeyLeakRoutes(): RoutesDescription {
  return {
    paths: {
      [PATHS.keyRevocation]: {
        post: {
          operationId: 'v1_keys_revoke_post',
          summary: 'Turn a key off by presenting it (self-revocation); no token needed',
          tags: [TAG],
          requestBody: jsonOrFormBody('SelfRevocationBody'),
          responses: {
            200: ok(
              'The same empty object whether or not the key existed (as RFC 7009). A key of this service is now disabled (disabled_reason holder) and its tokens stop working.',
              'SelfRevocationResponse',
              { 'Cache-Control': header('Cache-Control') },
            ),
            ...errors('BadRequest', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests', 'ServiceUnavailable'),
          },
        },
      },
      [PATHS.githubSecretScanning]: {
        post: {
          operationId: 'v1_secret_scanning_github_post',
          summary: "Leaked keys reported by GitHub's secret scanning partner programme (signed by GitHub)",
          tags: [TAG],
          parameters: GITHUB_HEADERS,
          requestBody: jsonBody('SecretScanningReport', `GitHub's payload: 1 to ${MAX_REPORTED_TOKENS} findings, up to 64 KiB.`),
          responses: {
            200: ok('One entry per reported token, in the order reported (GitHub\'s format).', 'SecretScanningAnswer'),
            ...errors('BadRequest', 'Unauthorized', 'PayloadTooLarge', 'UnsupportedMediaType', 'ServiceUnavailable'),
          },
        },
      },
    },
    requestSchemas: { SelfRevocationBody: selfRevocationBody, SecretScanningReport: secretScanningReport },
    responseSchemas: { SelfRevocationResponse: selfRevocationResponse, SecretScanningAnswer: secretScanningAnswer },
  };
}
