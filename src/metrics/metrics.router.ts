import { Router } from 'express';
import { PATHS } from '../shared/paths';
import { methodNotAllowed } from '../http/error-handler';
import type { Metrics } from './metrics';

/** GET /metrics: the Prometheus text format. No token: keep it off public networks (METRICS_PORT). */
export function metricsRouter(metrics: Metrics): Router {
  const router = Router();
  router
    .route(PATHS.metrics)
    .get(async function scrapeMetrics(_req, res) {
      const body = await metrics.render();
      res.setHeader('Content-Type', metrics.contentType);
      res.setHeader('Cache-Control', 'no-store');
      res.send(body);
    })
    .all(methodNotAllowed(['GET']));
  return router;
}
