import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type request from 'supertest';
import type { Response, Test } from 'supertest';
import { buildOpenApiDocument, type OpenApiOperation } from '../../src/openapi/openapi.document';

/**
 * Checks real responses against the OpenAPI document: the status must be one the operation lists
 * (`default` only stands for server faults, 5xx), documented required headers must be present and
 * valid, and the body must match the schema of its media type.
 */

type Json = Record<string, unknown>;
type Headers = Record<string, string | undefined>;

const DOCUMENT_ID = 'https://openapi.test/schemas.json';
const document = buildOpenApiDocument('http://issuer.test');

/** Paths where a response is checked even when no documented path matches (it must be an error). */
const CHECKED_PREFIXES = ['/api/', '/.well-known/'];

/** `#/components/schemas/X` → an absolute reference into the schemas registered below. */
function absoluteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(absoluteRefs);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) =>
      key === '$ref' && typeof v === 'string' ? [key, v.replace('#/components/schemas/', `${DOCUMENT_ID}#/$defs/`)] : [key, absoluteRefs(v)],
    ),
  );
}

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: DOCUMENT_ID, $defs: absoluteRefs(document.components.schemas) });

const validators = new Map<string, ValidateFunction>();
function validatorFor(key: string, schema: unknown): ValidateFunction {
  let validate = validators.get(key);
  if (!validate) validators.set(key, (validate = ajv.compile(absoluteRefs(schema) as Json)));
  return validate;
}

/** Follows a local `$ref` such as `#/components/responses/NotFound` within the document. */
function deref<T>(value: T | { $ref: string }): T {
  if (!value || typeof value !== 'object' || !('$ref' in value)) return value as T;
  const target = value.$ref.replace(/^#\//, '').split('/').reduce<unknown>((node, part) => (node as Json)[part], document);
  return deref(target as T);
}

const templates = Object.entries(document.paths).map(([template, item]) => ({
  template,
  item,
  pattern: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
}));

function fail(where: string, problem: string, body: unknown): never {
  throw new Error(`OpenAPI contract: ${where} ${problem}\nbody: ${JSON.stringify(body)?.slice(0, 500)}`);
}

function check(where: string, key: string, schema: unknown, value: unknown, what: string): void {
  const validate = validatorFor(key, schema);
  if (!validate(value)) fail(where, `${what} does not match the document: ${ajv.errorsText(validate.errors, { dataVar: what })}`, value);
}

/** Responses of undocumented paths and methods (404, 405, or 401 first on key routes) must still be the error body. */
function checkUndocumented(where: string, status: number, body: unknown): void {
  if (status < 400) fail(where, `answered ${status}, but the document has no such operation`, body);
  check(where, 'Error', { $ref: '#/components/schemas/Error' }, body, 'body');
}

/** Throws a descriptive error when the response does not match the document. */
export function checkResponse(method: string, url: string, status: number, headers: Headers, body: unknown): void {
  const path = new URL(url, 'http://localhost').pathname;
  const verb = method.toUpperCase();
  const where = `${verb} ${path} → ${status}:`;
  if (status >= 400 && body && typeof body === 'object' && (body as Json).status !== status) {
    fail(where, 'error body status differs from the HTTP status', body);
  }

  const route = templates.find((t) => t.pattern.test(path));
  if (!route) {
    if (CHECKED_PREFIXES.some((prefix) => path.startsWith(prefix))) checkUndocumented(where, status, body);
    return;
  }
  const operationKey = verb === 'HEAD' ? 'get' : (verb.toLowerCase() as keyof typeof route.item);
  const operation = route.item[operationKey] as OpenApiOperation | undefined;
  if (!operation) return checkUndocumented(where, status, body);

  const documented = operation.responses[String(status)] ?? (status >= 500 ? operation.responses.default : undefined);
  if (!documented) fail(where, `status not documented for ${operation.operationId} (documented: ${Object.keys(operation.responses).join(', ')})`, body);
  const response = deref(documented) as { headers?: Record<string, Json>; content?: Record<string, { schema: unknown }> };
  const responseKey = `${route.template} ${operationKey} ${status}`;

  for (const [name, ref] of Object.entries(response.headers ?? {})) {
    const spec = deref(ref) as { required?: boolean; schema: unknown };
    const value = headers[name.toLowerCase()];
    if (value === undefined) {
      if (spec.required) fail(where, `required header ${name} is missing`, body);
      continue;
    }
    check(where, `${responseKey} header ${name}`, spec.schema, value, `header ${name}`);
  }

  const mediaType = headers['content-type']?.split(';')[0]?.trim();
  if (!response.content) {
    if (mediaType) fail(where, `documented without a body, but answered ${mediaType}`, body);
    return;
  }
  const media = mediaType ? response.content[mediaType] : undefined;
  if (!media) fail(where, `media type ${mediaType ?? '(none)'} not documented (documented: ${Object.keys(response.content).join(', ')})`, body);
  if (verb !== 'HEAD') check(where, `${responseKey} ${mediaType}`, media.schema, body, 'body');
}

type Agent = ReturnType<typeof request>;

/**
 * supertest with every request checked against the document: each method call (`get`, `post`, ...)
 * returns the usual Test with one more `.expect`, which supertest runs on completion; a throw
 * there rejects the awaited request with the contract error.
 */
export function checkedAgainstOpenApi(agent: Agent): Agent {
  return new Proxy(agent, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || typeof value !== 'function') return value;
      const method = property === 'del' ? 'delete' : property;
      return (url: string) =>
        (value as (url: string) => Test)
          .call(target, url)
          .expect((res: Response) => checkResponse(method, url, res.status, res.headers as Headers, res.body));
    },
  });
}
