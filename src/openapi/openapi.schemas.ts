import { z } from 'zod';
import { appnameParams, createApiKeyBody, listApiKeysQuery, regenApiKeyQuery, updateApiKeyBody } from '../api-keys/api-keys.schemas';
import { auditEventListEnvelope, auditEventRecord } from '../audit-events/audit-events.responses';
import { listAuditEventsQuery } from '../audit-events/audit-events.schemas';
import { apiKeyEnvelope, apiKeyListEnvelope, apiKeyRecord, apiKeyRecordWithAppkey, apiKeyWithAppkeyEnvelope } from '../api-keys/api-keys.responses';
import { apiKeyTokenBody, passwordTokenBody, refreshTokenBody } from '../tokens/tokens.schemas';
import { tokenResponse } from '../tokens/tokens.responses';
import { jwkSet } from '../signing-keys/jwks.responses';
import { introspectionBody, revocationBody } from '../oauth/oauth.schemas';
import { discoveryResponse, introspectionResponse } from '../oauth/oauth.responses';
import { healthStatus } from '../health/health.responses';
import { errorBody } from './error.responses';

export type JsonSchema = Record<string, unknown>;

/** OpenAPI 3.1 schemas are JSON Schema 2020-12. */
const TARGET = 'draft-2020-12';

/** Request schemas are converted as the client writes them (`io: 'input'`: defaults make fields optional). */
const REQUEST_SCHEMAS = {
  CreateApiKeyBody: createApiKeyBody,
  UpdateApiKeyBody: updateApiKeyBody,
  ApiKeyTokenBody: apiKeyTokenBody,
  PasswordTokenBody: passwordTokenBody,
  RefreshTokenBody: refreshTokenBody,
  RevocationBody: revocationBody,
  IntrospectionBody: introspectionBody,
};

/** The outline of this document itself, as served at /api/v1/openapi.json. */
const openApiDocumentOutline = z.looseObject({
  openapi: z.literal('3.1.0'),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.looseObject({})),
});

/** Response schemas are converted as the service sends them (`io: 'output'`). */
const RESPONSE_SCHEMAS = {
  ApiKeyRecord: apiKeyRecord,
  ApiKeyRecordWithAppkey: apiKeyRecordWithAppkey,
  ApiKeyEnvelope: apiKeyEnvelope,
  ApiKeyWithAppkeyEnvelope: apiKeyWithAppkeyEnvelope,
  ApiKeyListEnvelope: apiKeyListEnvelope,
  AuditEvent: auditEventRecord,
  AuditEventListEnvelope: auditEventListEnvelope,
  TokenResponse: tokenResponse,
  JwkSet: jwkSet,
  IntrospectionResponse: introspectionResponse,
  DiscoveryDocument: discoveryResponse,
  HealthStatus: healthStatus,
  Error: errorBody,
  OpenApiDocument: openApiDocumentOutline,
};

export type SchemaName = keyof typeof REQUEST_SCHEMAS | keyof typeof RESPONSE_SCHEMAS;

const refTo = (name: string) => `#/components/schemas/${name}`;

export const schemaRef = (name: SchemaName) => ({ $ref: refTo(name) });

/** `$schema` and `$id` belong to standalone schemas, not to schemas embedded in a document. */
function embeddable({ $schema: _schema, $id: _id, ...rest }: JsonSchema): JsonSchema {
  return rest;
}

function convertAll(schemas: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(schemas)) registry.add(schema, { id });
  const { schemas: converted } = z.toJSONSchema(registry, { target: TARGET, io, uri: refTo });
  return Object.fromEntries(Object.entries(converted).map(([id, schema]) => [id, embeddable(schema as JsonSchema)]));
}

/** components.schemas: named schemas reference each other by `$ref`. */
export function componentSchemas(): Record<SchemaName, JsonSchema> {
  return { ...convertAll(REQUEST_SCHEMAS, 'input'), ...convertAll(RESPONSE_SCHEMAS, 'output') } as Record<SchemaName, JsonSchema>;
}

/** One zod schema, converted on its own (everything inline). */
export function inlineSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  return embeddable(z.toJSONSchema(schema, { target: TARGET, io }) as JsonSchema);
}

/**
 * OpenAPI parameter objects from a strict object schema of path or query values; zod cannot
 * carry the `/** *\/` comments of the schema files, so descriptions are passed in.
 */
function parametersOf(schema: z.ZodObject, location: 'path' | 'query', descriptions: Record<string, string>) {
  const { properties = {}, required = [] } = inlineSchema(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || required.includes(name),
    description: descriptions[name],
    schema: property,
  }));
}

export function appnameParameter() {
  const [appname] = parametersOf(appnameParams, 'path', { appname: 'Name of the API key.' });
  return appname!;
}

export function listQueryParameters() {
  return parametersOf(listApiKeysQuery, 'query', {
    limit: 'Page size, 1 to 1000; 1000 when omitted.',
    after: 'Return only keys whose appname sorts strictly after this one (byte order).',
  });
}

export function regenQueryParameters() {
  return parametersOf(regenApiKeyQuery, 'query', {
    grace_seconds:
      'Seconds (0 to 604800; 0 when omitted) during which the replaced appkey, and the sessions it opened, keep working. A regen during a grace ends that grace at once.',
  });
}

export function auditQueryParameters() {
  return parametersOf(listAuditEventsQuery, 'query', {
    limit: 'Page size, 1 to 1000; 100 when omitted.',
    before: 'Only events with a smaller id: the last id of the previous page.',
    appname: 'Only events about this API key.',
    username: 'Only events about this user.',
    actor: 'Only events by this actor, e.g. user:alice, api_key:billing, cli, system, anonymous.',
    type: 'Only events of this type.',
    since: 'Only events at or after this instant (ISO 8601 with a time zone).',
    until: 'Only events before this instant (ISO 8601 with a time zone).',
  });
}
