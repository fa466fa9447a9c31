import { Router, type RequestHandler } from 'express';
import { PATHS } from '../shared/paths';
import { AppError, forbidden } from '../shared/errors';
import { allows } from '../shared/principals';
import { authenticate, principalOf, type Authenticator } from '../http/authenticate';
import { methodNotAllowed } from '../http/error-handler';
import type { Metrics } from './metrics';

/** Who may scrape GET /metrics on the main port in production: an admin's bearer token, refused tokens counted per address. */
export interface MetricsGuard {
  authenticator: Authenticator;
  bearerFailures: RequestHandler[];
}

/**
 * GET /metrics: the Prometheus text format. Without `guard` (its own METRICS_PORT on loopback, or
 * outside production) no token; with it, a bearer token with api-keys:admin, since the main port
 * is the public one and the figures describe the service's load and its refusals.
 */
export function metricsRouter(metrics: Metrics, guard?: MetricsGuard): Router {
  const router = Router();
  const admitted: RequestHandler[] = guard
    ? [
        ...guard.bearerFailures,
        authenticate(guard.authenticator),
        function requireAdmin(_req, res, next) {
          if (!allows.administer(principalOf(res))) throw forbidden('Metrics need the api-keys:admin scope');
          next();
        },
      ]
    : [];
  router
    .route(PATHS.metrics)
    .get(...admitted, async function scrapeMetrics(_req, res) {
      const body = await metrics.render();
      res.setHeader('Content-Type', metrics.contentType);
      res.setHeader('Cache-Control', 'no-store');
      res.send(body);
    })
    .all(methodNotAllowed(['GET']));
  return router;
}

/**
 * GET /metrics on the main port while it is not served there: the uniform 404, with a message that
 * says where the metrics are, or how to turn them on.
 */
export function metricsElsewhereRouter(elsewhere: 'disabled' | 'own-port'): Router {
  const message =
    elsewhere === 'disabled'
      ? 'Metrics are off: set METRICS_ENABLED=true to collect them and serve them at GET /metrics (METRICS_PORT serves them on a port of their own)'
      : 'Metrics are served on their own port (METRICS_PORT, on METRICS_HOST), not on this one';
  const router = Router();
  router.all(PATHS.metrics, function metricsNotHere() {
    throw new AppError('NotFound', message);
  });
  return router;
}
