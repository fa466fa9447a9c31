import { Router } from 'express';
import { PATHS } from '../shared/paths';
import { methodNotAllowed } from '../http/error-handler';
import type { OpenApiDocument } from './openapi.document';

/**
 * GET /api/v1/openapi.json: the document, built at its first request and kept as JSON text. No token
 * needed. Built lazily because few processes are ever asked for it, and the document as objects
 * would hold heap for the life of the process (docs/performance.md, "memory").
 */
export function openApiRouter(buildDocument: () => OpenApiDocument): Router {
  let body: string | undefined;
  const router = Router();
  router
    .route(PATHS.openApi)
    .get(function openApiDocument(_req, res) {
      body ??= JSON.stringify(buildDocument());
      res.type('json').send(body);
    })
    .all(methodNotAllowed(['GET']));
  return router;
}
