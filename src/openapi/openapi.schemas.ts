import { z } from 'zod';
import { namedSchemas, type JsonSchema, type RoutesDescription } from '../http/openapi';

/** The outline of this document itself, as served at /api/v1/openapi.json. */
export const openApiDocumentOutline = z.looseObject({
  openapi: z.literal('3.1.0'),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.looseObject({})),
});

/** Two routers naming the same component would silently replace one another: refuse it. */
export function mergeDistinct<T>(what: string, parts: (Record<string, T> | undefined)[]): Record<string, T> {
  const merged: Record<string, T> = {};
  for (const part of parts) {
    for (const [name, value] of Object.entries(part ?? {})) {
      if (name in merged) throw new Error(`OpenAPI: ${what} ${name} is described twice`);
      merged[name] = value;
    }
  }
  return merged;
}

/**
 * components.schemas: all request schemas converted in one registry, then all response schemas in
 * another, so named schemas reference each other by `$ref` whichever router declared them.
 */
export function componentSchemas(descriptions: RoutesDescription[]): Record<string, JsonSchema> {
  const requests = mergeDistinct('schema', descriptions.map((d) => d.requestSchemas));
  const responses = mergeDistinct('schema', descriptions.map((d) => d.responseSchemas));
  return mergeDistinct('schema', [namedSchemas(requests, 'input'), namedSchemas(responses, 'output')]);
}
