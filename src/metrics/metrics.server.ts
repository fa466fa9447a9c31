import express from 'express';
import type { Server } from 'node:http';
import { errorHandler, notFoundHandler } from '../http/error-handler';
import type { Logger } from '../logger';
import type { Metrics } from './metrics';
import { metricsRouter } from './metrics.router';

/**
 * A separate HTTP server answering only GET /metrics (METRICS_PORT), so scraping need not be exposed
 * where the API is; `host` is METRICS_HOST (127.0.0.1 by default, whatever HOST is). Resolves once
 * listening; other paths get the uniform 404.
 */
export function startMetricsServer(metrics: Metrics, logger: Logger, port: number, host: string): Promise<Server> {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(metricsRouter(metrics));
  app.use(notFoundHandler);
  app.use(errorHandler(logger));
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, (err?: Error) => {
      if (err) return reject(err);
      const address = server.address();
      // The address too: an operator should see at a glance whether scraping is open beyond this machine.
      const bound = typeof address === 'object' && address ? { address: address.address, port: address.port } : { address: host, port };
      logger.info(bound, 'metrics listening');
      resolve(server);
    });
  });
}

/** Closes the metrics server; a scraper's keep-alive connection must not hold shutdown open. */
export function stopMetricsServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
