import { z } from 'zod';
import { ERROR_STATUS, type ErrorName } from '../shared/errors';

/**
 * The words every feature's `<feature>.openapi.ts` describes its routes with, so a route and its
 * OpenAPI operation live in one folder; src/openapi/ only assembles the descriptions.
 */

export type Json = Record<string, unknown>;
export type JsonSchema = Record<string, unknown>;

/** The fields of an operation object this service writes. */
export interface OpenApiOperation {
  operationId: string;
  summary: string;
  tags: string[];
  security?: Record<string, string[]>[];
  parameters?: Json[];
  requestBody?: Json;
  responses: Record<string, Json>;
}

/** Path-level `parameters` are shared by every operation of the path. */
export type OpenApiPathItem = { parameters?: Json[] } & Partial<Record<'get' | 'post' | 'put' | 'delete', OpenApiOperation>>;

/** One router's share of the document: its paths, and the components they name. */
export interface RoutesDescription {
  paths: Record<string, OpenApiPathItem>;
  /** Named schemas of request bodies, converted as the client writes them (`io: 'input'`: defaults make fields optional). */
  requestSchemas?: Record<string, z.ZodType>;
  /** Named schemas of response bodies, converted as the service sends them (`io: 'output'`). */
  responseSchemas?: Record<string, z.ZodType>;
  /** Named parameter objects (components.parameters). */
  parameters?: Record<string, Json>;
}

/** OpenAPI 3.1 schemas are JSON Schema 2020-12. */
const TARGET = 'draft-2020-12';
const JSON_MEDIA = 'application/json';
const FORM_MEDIA = 'application/x-www-form-urlencoded';

/** The security requirement of operations that need an access token: a bearer one, or a DPoP-bound one with its proof. */
export const BEARER: Record<string, string[]>[] = [{ bearerAuth: [] }, { dpopAuth: [] }];

/** RFC 9449 §4.1: the header a DPoP proof comes in. */
export const DPOP_HEADER = {
  name: 'DPoP',
  in: 'header',
  required: false,
  description:
    'A DPoP proof (RFC 9449 §4): a JWT typed dpop+jwt, signed by the key in its jwk header (ES256, EdDSA/Ed25519 or RS256), with jti, htm, htu and an iat ' +
    'within 60 s of now, each proof used once. At the token endpoint and on the refresh route it binds the tokens issued, and the session, to that key (token_type DPoP, cnf.jkt); ' +
    'a DPoP-bound refresh token needs one by its key.',
  schema: { type: 'string' },
};

/** A bearer operation that reads no body still refuses one that is not JSON (415), malformed (400) or too large (413). */
export const BODILESS_BEARER_ERRORS = ['BadRequest', 'Unauthorized', 'Forbidden', 'PayloadTooLarge', 'UnsupportedMediaType', 'TooManyRequests'] as const;

const refTo = (name: string) => `#/components/schemas/${name}`;

/** Named schemas are written once, under components.schemas, and referred to everywhere else. */
export const schemaRef = (name: string) => ({ $ref: refTo(name) });

/** A header the document declares once under components.headers. */
export const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

const json = (schema: Json) => ({ content: { [JSON_MEDIA]: { schema } } });

/** A success response whose JSON body is the named schema. */
export const ok = (description: string, schema: string, headers?: Json) => ({ description, ...(headers && { headers }), ...json(schemaRef(schema)) });

/** Error statuses by name, each pointing at its shared response; `default` stands for any server fault. */
export function errors(...names: ErrorName[]): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const name of names) out[String(ERROR_STATUS[name])] = { $ref: `#/components/responses/${name}` };
  out.default = { $ref: '#/components/responses/UnexpectedError' };
  return out;
}

/** A required JSON request body of the named schema. */
export function jsonBody(schema: string, description: string) {
  return { required: true, description, ...json(schemaRef(schema)) };
}

/** Token routes take JSON or a form, with the same fields. */
export function jsonOrFormBody(body: string) {
  return { required: true, content: { [JSON_MEDIA]: { schema: schemaRef(body) }, [FORM_MEDIA]: { schema: schemaRef(body) } } };
}

/** `$schema` and `$id` belong to standalone schemas, not to schemas embedded in a document. */
function embeddable({ $schema: _schema, $id: _id, ...rest }: JsonSchema): JsonSchema {
  return rest;
}

/** One zod schema, converted on its own (everything inline). */
export function inlineSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  return embeddable(z.toJSONSchema(schema, { target: TARGET, io }) as JsonSchema);
}

/** Named zod schemas converted together, so that one naming another refers to it by `$ref`. */
export function namedSchemas(schemas: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(schemas)) registry.add(schema, { id });
  const { schemas: converted } = z.toJSONSchema(registry, { target: TARGET, io, uri: refTo });
  return Object.fromEntries(Object.entries(converted).map(([id, schema]) => [id, embeddable(schema as JsonSchema)]));
}

/**
 * OpenAPI parameter objects from a strict object schema of path or query values; zod cannot
 * carry the `/** *\/` comments of the schema files, so descriptions are passed in.
 */
export function parametersOf(schema: z.ZodObject, location: 'path' | 'query', descriptions: Record<string, string>) {
  const { properties = {}, required = [] } = inlineSchema(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || required.includes(name),
    description: descriptions[name],
    schema: property,
  }));
}
