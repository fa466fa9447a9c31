import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config';
import type { Logger } from './logger';
import { buildApp } from './app';
import { startRuntime } from './runtime';
import { startMaintenance } from './maintenance';
import type { Services } from './services';
import { loadRateLimits } from './http/load-rate-limits';
import type { AccountAlert } from './http/rate-limits';
import { originOf } from './http/request-origin';
import { recordAuditEvent } from './audit-trail/audit-trail';
import { answerClientErrors } from './http/client-errors';
import type { Metrics } from './metrics/metrics';
import type { RedisConnection } from './cache/redis-connection';
import { startMetricsServer, stopMetricsServer } from './metrics/metrics.server';
import { RedisKeyRateCounter } from './key-policies/rate-counter';
import type { Clock } from './key-policies/policy';

export interface RunningServer {
  /** `http://<host>:<port>` as bound (port 0 becomes the port the system chose). */
  url: string;
  port: number;
  services: Services;
  /** Present when METRICS_ENABLED=true. */
  metrics: Metrics | undefined;
  /** Where GET /metrics is served when METRICS_PORT is set. */
  metricsUrl: string | undefined;
  /** Stops accepting, lets in-flight requests finish (at most SHUTDOWN_TIMEOUT), then closes the pool and the rest. */
  stop: () => Promise<void>;
}

/**
 * The service, started: database open and migrated, services built, the HTTP server listening with
 * its timeouts, the maintenance loop running. The one way to start it: main.ts, the tests, the
 * benchmarks and the soak test all come through here.
 */
export async function startServer(config: Config, logger: Logger, options: { createFirstAdmin?: boolean; clock?: Clock } = {}): Promise<RunningServer> {
  // prom-client (and what it pulls in) is loaded only when metrics are on: it costs memory (docs/performance.md).
  const metrics: Metrics | undefined = config.metrics.enabled ? new (await import('./metrics/metrics')).Metrics() : undefined;
  // Connected first: the keys' own rate limits count there too, so the services are built with it.
  const redis = await connectRedisWhenConfigured(config, logger);
  const keyRateCounter = redis && new RedisKeyRateCounter((args) => redis.send(args), config.rateLimits.redisPrefix);
  const services = await startRuntime(config, logger, { ...options, tokenEvents: metrics?.tokenEvents, keyRateCounter }).catch(async (err: unknown) => {
    await redis?.close();
    throw err;
  });
  const cleanups: (() => Promise<unknown>)[] = [];
  if (redis) cleanups.push(redis.close);
  try {
    const rateLimits = await loadRateLimits(config.rateLimits, logger, {
      stores: redis && { storeFor: (await import('./http/redis-rate-limit-store')).redisStores(redis, config.rateLimits.redisPrefix), available: redis.isUp },
      onRejected: metrics?.rateLimitRejected,
      onAccountAlert: (alert) => recordAccountAlert(services, logger, alert),
    });
    const app = buildApp({ config, logger, services, rateLimits, metrics, redisUp: redis && (() => redis.answers()) });
    // Started first: a taken METRICS_PORT fails the start before the API accepts anything.
    let metricsUrl: string | undefined;
    if (metrics && config.metrics.port !== undefined) {
      const metricsServer = await startMetricsServer(metrics, logger, config.metrics.port, config.metrics.host);
      cleanups.push(() => stopMetricsServer(metricsServer));
      metricsUrl = urlOf(metricsServer, config.metrics.host);
    }
    const server = await listen(app.listen.bind(app), config.port, config.host);
    answerClientErrors(server);
    // Keep-alive connections would otherwise hold shutdown open until the client lets go.
    server.keepAliveTimeout = 5_000;
    // A client that trickles its request (slowloris) is cut off instead of holding a socket for minutes.
    server.headersTimeout = 15_000;
    server.requestTimeout = 30_000;
    const stopMaintenance = startMaintenance(services.db, logger, {
      intervalSeconds: config.maintenanceIntervalSeconds,
      clockTolerance: config.clockTolerance,
      webhookRetentionDays: config.webhooks.retentionDays,
      usageRetentionDays: config.usage.retentionDays,
      clock: services.clock,
    });
    const dispatcher = services.webhooks.dispatcher(logger, { onOutcome: metrics?.webhookOutcome, onLag: metrics?.webhookLag });
    dispatcher.start();
    services.usageRecorder.start(logger);
    if (config.webhooks.allowInsecure && config.env === 'production') {
      logger.warn('WEBHOOK_ALLOW_INSECURE=true: webhook endpoints may use http: and non-public addresses; this is meant for development and tests');
    }
    const port = (server.address() as AddressInfo).port;
    logger.info({ port, issuer: config.issuer }, 'listening');
    return {
      url: urlOf(server, config.host),
      port,
      services,
      metrics,
      metricsUrl,
      // The pool closes once pruning, the dispatcher (whose last sends record their outcomes) and the usage counts' last flush have stopped.
      stop: () =>
        stop(server, config.shutdownTimeoutSeconds, logger, [
          () => Promise.all([stopMaintenance(), dispatcher.stop(), services.usageRecorder.stop()]).finally(() => services.db.close()),
          ...cleanups,
        ]),
    };
  } catch (err) {
    await Promise.allSettled([services.db.close(), ...cleanups.map((cleanup) => cleanup())]);
    throw err;
  }
}

/**
 * The Redis of REDIS_URL, when set. Loaded only then: otherwise the Redis client holds resident memory
 * for nothing (docs/performance.md, "memory").
 */
async function connectRedisWhenConfigured(config: Config, logger: Logger): Promise<RedisConnection | undefined> {
  if (!config.redis.url) return undefined;
  return (await import('./cache/redis-connection')).connectRedis(config.redis.url, { timeoutMs: config.redis.timeoutMs, logger });
}

/**
 * One username failed to log in more than LOGIN_ACCOUNT_ALERT times in the window: a guesser at
 * work, perhaps from many addresses. Written down once per window for operators; the attempts are
 * slowed, never refused.
 */
async function recordAccountAlert(services: Services, logger: Logger, { username, failures, windowSeconds, req }: AccountAlert): Promise<void> {
  const origin = originOf(req);
  logger.warn({ username, failures, windowSeconds, requestId: origin.requestId }, 'many failed logins for one username; its logins are slowed by a second');
  await recordAuditEvent(services.db, { ...origin, actor: 'anonymous' }, { type: 'login.throttled', username, details: { route: origin.route, failures, window_seconds: windowSeconds } }).catch(
    (err: Error) => logger.warn({ cause: err.message }, 'could not record login.throttled'),
  );
}

/** An address this machine can reach the server at: loopback when it listens on every interface. */
function urlOf(server: Server, host: string): string {
  const everywhere = host === '0.0.0.0' || host === '::';
  return `http://${everywhere ? '127.0.0.1' : host}:${(server.address() as AddressInfo).port}`;
}

type Listen = (port: number, host: string, callback: (err?: Error) => void) => Server;

/** Resolves once listening; a port in use rejects with a message that names it, rather than an unheard 'error'. */
function listen(appListen: Listen, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = appListen(port, host, (err?: Error) => {
      if (!err) return resolve(server);
      const code = (err as NodeJS.ErrnoException).code;
      reject(code === 'EADDRINUSE' ? new Error(`port ${port} on ${host} is already in use (PORT, HOST)`) : err);
    });
  });
}

/** Stop accepting, let in-flight requests finish (bounded by `timeoutSeconds`), then run the cleanups. */
function stop(server: Server, timeoutSeconds: number, logger: Logger, cleanups: (() => Promise<unknown>)[]): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => {
      logger.warn('shutdown timeout reached; closing remaining connections');
      server.closeAllConnections();
    }, timeoutSeconds * 1000);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      Promise.all(cleanups.map((cleanup) => cleanup()))
        .catch((err: Error) => logger.warn({ cause: err.message }, 'closing connections failed'))
        .finally(resolve);
    });
    server.closeIdleConnections();
  });
}
