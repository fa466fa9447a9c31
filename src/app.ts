import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Config } from './config';
import type { Logger } from './logger';
import type { Services } from './services';
import { requestLogger } from './http/request-logger';
import { errorHandler, notFoundHandler } from './http/error-handler';
import { healthRouter } from './health/health.router';
import { authRouter } from './auth/auth.router';
import { apiKeysRouter } from './api-keys/api-keys.router';
import { buildRateLimits, type RateLimits } from './http/rate-limits';
import { buildOpenApiDocument } from './openapi/openapi.document';
import { openApiRouter } from './openapi/openapi.router';

export interface AppDeps {
  config: Pick<Config, 'trustProxy' | 'issuer' | 'rateLimits'>;
  logger: Logger;
  services: Services;
  /** Defaults to the configured limits with in-memory counters. */
  rateLimits?: RateLimits;
}

/** The HTTP application. Never listens: main.ts does, and tests drive it with supertest. */
export function buildApp({ config, logger, services, rateLimits = buildRateLimits(config.rateLimits) }: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.set('etag', false);

  app.use(requestLogger(logger));
  app.use(helmet());

  app.use(healthRouter(services.db));
  app.use(authRouter(services.tokens, services.signingKeys, rateLimits));
  app.use(openApiRouter(buildOpenApiDocument(config.issuer)));
  app.use('/api/v1/api-keys', apiKeysRouter(services.apiKeys, services.authenticator, rateLimits));

  app.use(notFoundHandler);
  app.use(errorHandler(logger));
  return app;
}
