import { Router } from 'express';
import { methodNotAllowed } from '../http/error-handler';
import type { OpenApiDocument } from './openapi.document';

/** GET /api/v1/openapi.json: the document, built once with the app. No token needed. */
export function openApiRouter(document: OpenApiDocument): Router {
  const router = Router();
  router
    .route('/api/v1/openapi.json')
    .get(function openApiDocument(_req, res) {
      res.json(document);
    })
    .all(methodNotAllowed(['GET']));
  return router;
}
