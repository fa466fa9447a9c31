import { z } from 'zod';
import { appnameParams, createApiKeyBody, listApiKeysQuery, updateApiKeyBody } from '../api-keys/api-keys.schemas';
import { apiKeyEnvelope, apiKeyListEnvelope, apiKeyRecord, apiKeyRecordWithAppkey, apiKeyWithAppkeyEnvelope } from '../api-keys/api-keys.responses';
import { apiKeyTokenBody, passwordTokenBody, refreshTokenBody } from '../auth/auth.schemas';
import { jwkSet, tokenResponse } from '../auth/auth.responses';
import { introspectionBody, revocationBody } from '../auth/oauth.schemas';
import { discoveryResponse, introspectionResponse } from '../auth/oauth.responses';
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
