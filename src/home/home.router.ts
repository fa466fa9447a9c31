import { Router } from 'express';
import { PATHS } from '../shared/paths';
import { methodNotAllowed } from '../http/error-handler';
import type { HomeIndex } from './home.responses';

export interface HomeOptions {
  /** GET / sends a browser to the console while it is served. */
  console: boolean;
  /** The API reference is linked while it is served. */
  apiReference: boolean;
}

/**
 * GET /: the front door. With the console on, a redirect to it (a person with a browser); otherwise a
 * small JSON index of where to go (a person with curl). Either way a `Link` header names the API
 * description and its documentation (RFC 8631's service-desc and service-doc).
 */
export function homeRouter(options: HomeOptions): Router {
  const link = [`<${PATHS.openApi}>; rel="service-desc"`, ...(options.apiReference ? [`<${PATHS.apiReference}/>; rel="service-doc"`] : [])].join(', ');
  const index: HomeIndex = {
    service: 'api-key-token-service',
    links: {
      ...(options.apiReference && { api_reference: `${PATHS.apiReference}/` }),
      openapi: PATHS.openApi,
      discovery: PATHS.discovery,
      jwks: PATHS.jwks,
      health: PATHS.health,
      readiness: PATHS.readiness,
    },
  };
  const router = Router();
  router
    .route(PATHS.home)
    .get(function home(_req, res) {
      res.setHeader('Link', link);
      if (options.console) {
        // No body: Express's would be a line of text for a client that does not follow redirects.
        res.status(302).location(`${PATHS.console}/`).end();
        return;
      }
      res.json(index);
    })
    .all(methodNotAllowed(['GET']));
  return router;
}
