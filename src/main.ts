import { config as loadDotenv } from 'dotenv';
import type { Server } from 'node:http';
import { ConfigError, loadConfig } from './config';
import { createLogger, type Logger } from './logger';
import { buildApp } from './app';
import { startRuntime } from './runtime';
import { startMaintenance } from './maintenance';
import { loadRateLimits } from './http/rate-limits';
import type { Services } from './services';
import type { Metrics } from './metrics/metrics';
import { startMetricsServer, stopMetricsServer } from './metrics/metrics.server';
import { answerClientErrors } from './http/client-errors';

/** Stop accepting, let in-flight requests finish (bounded), close the pool, exit 0. */
function handleShutdown(server: Server, services: Services, logger: Logger, timeoutSeconds: number, cleanups: (() => unknown)[]) {
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');

    const force = setTimeout(() => {
      logger.warn('shutdown timeout reached; closing remaining connections');
      server.closeAllConnections();
    }, timeoutSeconds * 1000);
    force.unref();
    server.close(() => {
      Promise.all([services.db.close(), ...cleanups.map((cleanup) => cleanup())])
        .catch((err: Error) => logger.warn({ cause: err.message }, 'closing connections failed'))
        .finally(() => {
          logger.info('stopped');
          logger.flush();
          process.exit(0);
        });
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

async function main(): Promise<void> {
  loadDotenv({ quiet: true });
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  // prom-client (and what it pulls in) is loaded only when metrics are on: it costs memory (bench RSS).
  const metrics: Metrics | undefined = config.metrics.enabled ? new (await import('./metrics/metrics')).Metrics() : undefined;
  const services = await startRuntime(config, logger, { createFirstAdmin: true, tokenEvents: metrics?.tokenEvents });
  const redis = config.rateLimits.enabled && config.rateLimits.redisUrl
    ? // Loaded only when configured: the Redis client is a few MiB of resident memory for nothing otherwise.
      await (await import('./http/redis-rate-limit-store')).connectRedisStores(config.rateLimits.redisUrl, config.rateLimits.redisPrefix, logger)
    : undefined;
  const rateLimits = await loadRateLimits(config.rateLimits, redis?.storeFor, metrics?.rateLimitRejected);
  const app = buildApp({ config, logger, services, rateLimits, metrics });
  // Started first: a taken METRICS_PORT fails the start before the API accepts anything.
  const metricsServer =
    metrics && config.metrics.port !== undefined ? await startMetricsServer(metrics, logger, config.metrics.port, config.host) : undefined;
  const server = app.listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    logger.info({ port, issuer: config.issuer }, 'listening');
  });
  answerClientErrors(server);
  // Keep-alive connections would otherwise hold shutdown open until the client lets go.
  server.keepAliveTimeout = 5_000;
  // A client that trickles its request (slowloris) is cut off instead of holding a socket for minutes.
  server.headersTimeout = 15_000;
  server.requestTimeout = 30_000;
  const stopMaintenance = startMaintenance(services.db, logger, config.clockTolerance);
  handleShutdown(server, services, logger, config.shutdownTimeoutSeconds, [
    stopMaintenance,
    ...(redis ? [redis.close] : []),
    ...(metricsServer ? [() => stopMetricsServer(metricsServer)] : []),
  ]);
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    console.error(err.message);
  } else {
    console.error(`Failed to start: ${err instanceof Error ? err.message : String(err)}`);
  }
  process.exit(1);
});
