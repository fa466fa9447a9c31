import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import request from 'supertest';
import { buildApp } from '../../src/app';
import { answerClientErrors } from '../../src/http/client-errors';
import { loadRateLimits } from '../../src/http/rate-limits';
import { loadConfig, type Config } from '../../src/config';
import { Database } from '../../src/db/database';
import { migrate } from '../../src/db/migrate';
import { createLogger, type Logger } from '../../src/logger';
import { createServices, type Services } from '../../src/services';
import { Metrics } from '../../src/metrics/metrics';
import { checkedAgainstOpenApi } from './openapi-contract';
import { createTestDatabase, testPoolSize } from './database';

export interface TestApp {
  /** supertest bound to the listening server: `t.http().get('/healthz')`; every response is checked against the OpenAPI document. */
  http: () => ReturnType<typeof request>;
  baseUrl: string;
  config: Config;
  services: Services;
  db: Database;
  masterKey: Buffer;
  logger: Logger;
  /** Set when METRICS_ENABLED=true, as main.ts does. */
  metrics: Metrics | undefined;
  /** Every log line written so far, as raw JSON text. */
  logs: () => string;
  /** Drops this app's database (schema or PGlite instance) and closes everything. */
  close: () => Promise<void>;
}

/** Env-style overrides, e.g. `{ ACCESS_TOKEN_TTL: '2' }`. */
export type EnvOverrides = Record<string, string | undefined>;

const TEST_ISSUER = 'http://issuer.test';

/**
 * The real service on a fresh, migrated database of its own (a schema, or a PGlite instance),
 * listening on a random loopback port. Call in beforeAll, and `close()` in afterAll.
 */
export async function startTestApp(overrides: EnvOverrides = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  const url = database.url;

  const masterKey = randomBytes(32);
  const config = loadConfig({
    NODE_ENV: 'test',
    BCRYPT_COST: '4',
    CLOCK_TOLERANCE: '0',
    ISSUER: TEST_ISSUER,
    MASTER_KEY: masterKey.toString('base64'),
    LOG_LEVEL: 'debug',
    // Suites fire hundreds of token requests from one address; rate-limit tests turn this on.
    RATE_LIMIT_ENABLED: 'false',
    DATABASE_URL: url,
    ...overrides,
  });

  const captured: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      captured.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = createLogger(config.logLevel, sink);
  const db = new Database({ url, poolSize: testPoolSize(8) }, logger);
  await migrate(db, logger);
  const metrics = config.metrics.enabled ? new Metrics() : undefined;
  const services = createServices(config, db, config.masterKey ?? masterKey, metrics?.tokenEvents);
  await services.signingKeys.initialise();

  const rateLimits = await loadRateLimits(config.rateLimits, undefined, metrics?.rateLimitRejected);
  const app = buildApp({ config, logger, services, metrics, rateLimits });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  answerClientErrors(server);
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    http: () => checkedAgainstOpenApi(request(baseUrl)),
    baseUrl,
    config,
    services,
    db,
    masterKey: config.masterKey ?? masterKey,
    logger,
    metrics,
    logs: () => captured.join(''),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await db.close();
      await database.drop();
    },
  };
}
