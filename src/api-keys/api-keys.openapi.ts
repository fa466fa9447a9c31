import { PATHS } from '../shared/paths';
import {
  BEARER,
  BODILESS_BEARER_ERRORS,
  errors,
  jsonBody,
  ok,
  parametersOf,
  type OpenApiOperation,
  type RoutesDescription,
} from '../http/openapi';
import { appnameParams, createApiKeyBody, listApiKeysQuery, regenApiKeyQuery, updateApiKeyBody } from './api-keys.schemas';
import { apiKeyEnvelope, apiKeyListEnvelope, apiKeyRecord, apiKeyRecordWithAppkey, apiKeyWithAppkeyEnvelope } from './api-keys.responses';
import { putPolicyBody } from '../key-policies/policy.schemas';
import { keyPolicy, keyPolicyEnvelope } from '../key-policies/policy.responses';
import { usageQuery } from '../usage/usage.schemas';
import { usageEnvelope, usageInterval } from '../usage/usage.responses';

/** A key operation: bearer token required, authenticated before anything else. */
function keyOperation(operationId: string, summary: string, rest: Omit<OpenApiOperation, 'operationId' | 'summary' | 'tags' | 'security'>): OpenApiOperation {
  return { operationId, summary, tags: ['API keys'], security: BEARER, ...rest };
}

const APPNAME = { $ref: '#/components/parameters/Appname' };
const BODY_ERRORS = [...BODILESS_BEARER_ERRORS, 'NotFound'] as const;
const REPLACED_CONTENTS = 'The complete new contents; omitted fields become empty.';

function appnameParameter() {
  const [appname] = parametersOf(appnameParams, 'path', { appname: 'Name of the API key.' });
  return appname!;
}

function listQueryParameters() {
  return parametersOf(listApiKeysQuery, 'query', {
    limit: 'Page size, 1 to 1000; 1000 when omitted.',
    after: 'Return only keys whose appname sorts strictly after this one (byte order).',
    prefix:
      'Return only keys whose appname starts with this (1 to 64 characters of a-z 0-9 . _ -, each literal: no wildcards). Combines with limit and after, which page through the filtered list.',
  });
}

function usageQueryParameters() {
  return parametersOf(usageQuery, 'query', {
    interval: 'hour or day (UTC); day when omitted.',
    since: 'Unix seconds, inclusive (its interval is counted whole); 30 days before until when omitted.',
    until: 'Unix seconds, exclusive; now when omitted. At most 1000 intervals from since to until (else 400).',
  });
}

function regenQueryParameters() {
  return parametersOf(regenApiKeyQuery, 'query', {
    grace_seconds:
      'Seconds (0 to 604800 for an admin, at most 3600 for an editor; 0 when omitted) during which the replaced appkey, and the sessions it opened, keep working. A regen during a grace ends that grace at once.',
  });
}

/** The operations of apiKeysRouter, mounted at PATHS.apiKeys. */
export function describeApiKeyRoutes(): RoutesDescription {
  return {
    paths: {
      [PATHS.apiKeys]: {
        get: keyOperation('v1_api_keys_get', 'List API keys, ordered by appname', {
          parameters: listQueryParameters(),
          responses: { 200: ok('A page of API keys.', 'ApiKeyListEnvelope'), ...errors(...BODILESS_BEARER_ERRORS) },
        }),
        post: keyOperation('v1_api_keys_post', 'Create an API key', {
          requestBody: jsonBody('CreateApiKeyBody', 'The new key; the service generates its appkey.'),
          responses: {
            201: ok('The key, with its appkey (shown only now).', 'ApiKeyWithAppkeyEnvelope'),
            ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'Conflict', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'),
          },
        }),
      },
      [`${PATHS.apiKeys}/{appname}`]: {
        parameters: [APPNAME],
        get: keyOperation('v1_api_keys_appname_get', 'Get an API key', {
          responses: { 200: ok('The key.', 'ApiKeyEnvelope'), ...errors(...BODILESS_BEARER_ERRORS, 'NotFound') },
        }),
        put: keyOperation('v1_api_keys_appname_put', 'Update an API key (replaces description and roles)', {
          requestBody: jsonBody('UpdateApiKeyBody', REPLACED_CONTENTS),
          responses: { 200: ok('The updated key.', 'ApiKeyEnvelope'), ...errors(...BODY_ERRORS) },
        }),
        delete: keyOperation('v1_api_keys_appname_delete', 'Delete an API key and revoke its sessions', {
          responses: { 204: { description: 'Deleted; no body.' }, ...errors(...BODILESS_BEARER_ERRORS, 'NotFound') },
        }),
      },
      [`${PATHS.apiKeys}/{appname}/regen`]: {
        parameters: [APPNAME],
        put: keyOperation('v1_api_keys_appname_regen_put', 'Regenerate an API key\'s appkey (and replace its contents)', {
          parameters: regenQueryParameters(),
          requestBody: jsonBody('UpdateApiKeyBody', REPLACED_CONTENTS),
          responses: {
            200: ok('The key, with its new appkey; the old one and its sessions stop working now, or when grace_seconds have passed.', 'ApiKeyWithAppkeyEnvelope'),
            ...errors(...BODY_ERRORS),
          },
        }),
      },
      [`${PATHS.apiKeys}/{appname}/policy`]: {
        parameters: [APPNAME],
        get: keyOperation('v1_api_keys_appname_policy_get', "Get an API key's policy", {
          responses: { 200: ok('The policy; credits as of now (after any refill due).', 'KeyPolicyEnvelope'), ...errors(...BODILESS_BEARER_ERRORS, 'NotFound') },
        }),
        put: keyOperation('v1_api_keys_appname_policy_put', "Replace an API key's policy", {
          requestBody: jsonBody(
            'PutKeyPolicyBody',
            'The complete new policy; an omitted field takes its default. The read-only fields (created_at, last_used, disabled_reason) may be sent back only as they are stored.',
          ),
          responses: { 200: ok('The policy as stored now.', 'KeyPolicyEnvelope'), ...errors(...BODY_ERRORS) },
        }),
      },
      [`${PATHS.apiKeys}/{appname}/usage`]: {
        parameters: [APPNAME],
        get: keyOperation('v1_api_keys_appname_usage_get', "Get an API key's usage per hour or day", {
          parameters: usageQueryParameters(),
          responses: {
            200: ok(
              'One object per interval that had use, oldest first: tokens issued, verifications by code, refusals on the token routes by reason. Counts reach the database in batches (USAGE_FLUSH_SECONDS).',
              'KeyUsageEnvelope',
            ),
            ...errors(...BODILESS_BEARER_ERRORS, 'NotFound'),
          },
        }),
      },
    },
    requestSchemas: { CreateApiKeyBody: createApiKeyBody, UpdateApiKeyBody: updateApiKeyBody, PutKeyPolicyBody: putPolicyBody },
    responseSchemas: {
      KeyPolicy: keyPolicy,
      KeyPolicyEnvelope: keyPolicyEnvelope,
      KeyUsageInterval: usageInterval,
      KeyUsageEnvelope: usageEnvelope,
      ApiKeyRecord: apiKeyRecord,
      ApiKeyRecordWithAppkey: apiKeyRecordWithAppkey,
      ApiKeyEnvelope: apiKeyEnvelope,
      ApiKeyWithAppkeyEnvelope: apiKeyWithAppkeyEnvelope,
      ApiKeyListEnvelope: apiKeyListEnvelope,
    },
    parameters: { Appname: appnameParameter() },
  };
}
