import express, { type Express } from 'express';
import { PATHS } from './shared/paths';
import type { Config } from './config';
import type { Logger } from './logger';
import type { Services } from './services';
import { requestLogger } from './http/request-logger';
import { securityHeaders } from './http/security-headers';
import { warnOfUntrustedForwarding } from './http/untrusted-forwarding';
import { errorHandler, notFoundHandler } from './http/error-handler';
import { healthRouter } from './health/health.router';
import { tokensRouter } from './tokens/tokens.router';
import { jwksRouter } from './signing-keys/jwks.router';
import { oauthRouter } from './oauth/oauth.router';
import { oauthEndpointsRouter } from './oauth/oauth-endpoints.router';
import { discoveryDocument } from './oauth/discovery';
import { apiKeysRouter } from './api-keys/api-keys.router';
import { verifyRouter } from './verification/verify.router';
import { auditRouter } from './audit-events/audit-events.router';
import { webhooksRouter } from './webhooks/webhooks.router';
import type { RateLimits } from './http/rate-limits';
import { buildOpenApiDocument } from './openapi/openapi.document';
import { openApiRouter } from './openapi/openapi.router';
import { requestMetrics } from './metrics/request-metrics';
import type { Metrics } from './metrics/metrics';
import { metricsElsewhereRouter, metricsRouter } from './metrics/metrics.router';
import { consoleRouter } from './console/console.router';
import { apiReferenceRouter } from './api-reference/api-reference.router';
import { homeRouter } from './home/home.router';
import { consoleSessionRouter } from './console-session/console-session.router';
import { usersRouter } from './users/users.router';
import { meRouter } from './users/me.router';
import { keyLeaksRouter } from './key-leaks/key-leaks.router';

export interface AppDeps {
  config: Pick<Config, 'env' | 'trustProxy' | 'issuer' | 'metrics' | 'console' | 'apiReference' | 'webhooks'>;
  logger: Logger;
  services: Services;
  /** From loadRateLimits: the configured limits, or pass-through when they are off. */
  rateLimits: RateLimits;
  /** Present when the rate-limit counters live in Redis: whether it is connected, for /readyz. */
  redisUp?: () => Promise<boolean>;
  /** Present when METRICS_ENABLED=true: requests are measured, and GET /metrics served here unless METRICS_PORT is set. */
  metrics?: Metrics;
}

/** The HTTP application. Never listens: main.ts does, and tests drive it with supertest. */
export function buildApp({ config, logger, services, metrics, rateLimits, redisUp }: AppDeps): Express {
  const metricsHere = metrics !== undefined && config.metrics.port === undefined;
  // On the main port in production, scraping takes an admin's token: that port is the public one.
  const metricsGuarded = metricsHere && config.env === 'production';
  metrics?.watchPool(() => services.db.poolStats());
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.set('etag', false);

  app.use(requestLogger(logger));
  if (config.trustProxy === false) app.use(warnOfUntrustedForwarding(logger));
  if (metrics) app.use(requestMetrics(metrics));
  app.use(securityHeaders());

  // Busiest first: every request walks the routers in this order until one matches.
  app.use(PATHS.apiKeys, apiKeysRouter(services.apiKeys, services.keyPolicies, services.keyImports, services.keyUsage, services.keyRoutesAuthenticator, rateLimits));
  app.use(verifyRouter(services.verifier, services.verifyReadAlong, rateLimits));
  app.use(tokensRouter(services.grants, rateLimits, services.dpop));
  app.use(jwksRouter(services.signingKeys));
  app.use(
    oauthRouter({
      revocation: services.revocation,
      introspection: services.introspection,
      authenticator: services.authenticator,
      discovery: discoveryDocument(config.issuer),
      limits: rateLimits,
    }),
  );
  app.use(
    oauthEndpointsRouter({
      endpoint: services.tokenEndpoint,
      clients: services.clients,
      revocation: services.revocation,
      introspection: services.introspection,
      authenticator: services.authenticator,
      limits: rateLimits,
    }),
  );
  app.use(keyLeaksRouter(services.selfRevocation, services.secretScanning, rateLimits));
  app.use(PATHS.auditEvents, auditRouter(services.audit, services.authenticator, rateLimits));
  app.use(PATHS.webhooks, webhooksRouter(services.webhooks, services.authenticator, rateLimits, config.webhooks));
  app.use(PATHS.users, usersRouter(services.users, services.authenticator, rateLimits));
  app.use(PATHS.me, meRouter(services.ownPasswords, services.authenticator, rateLimits));
  app.use(healthRouter(services.db, redisUp));
  app.use(openApiRouter(() => buildOpenApiDocument(config.issuer, { metrics: metricsHere ? (metricsGuarded ? 'admin' : 'open') : undefined })));
  if (metricsHere) {
    const guard = metricsGuarded ? { authenticator: services.authenticator, bearerFailures: rateLimits.bearerFailures } : undefined;
    app.use(metricsRouter(metrics, guard));
  } else {
    app.use(metricsElsewhereRouter(metrics ? 'own-port' : 'disabled'));
  }
  // Off, /console/ and /api-reference/ are left to the 404 below like any unknown path.
  if (config.console.enabled) {
    app.use(PATHS.consoleSession, consoleSessionRouter(services.grants.refresh, services.revocation, rateLimits));
    app.use(PATHS.console, consoleRouter(config.console, logger));
  }
  if (config.apiReference.enabled) app.use(PATHS.apiReference, apiReferenceRouter(config.apiReference, logger));
  app.use(homeRouter({ console: config.console.enabled, apiReference: config.apiReference.enabled }));

  app.use(notFoundHandler);
  app.use(errorHandler(logger));
  return app;
}
