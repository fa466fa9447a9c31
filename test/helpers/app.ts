import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import request from 'supertest';
import { loadConfig, type Config } from '../../src/config';
import type { Database } from '../../src/db/database';
import { createLogger, type Logger } from '../../src/logger';
import type { Metrics } from '../../src/metrics/metrics';
import { startServer } from '../../src/server';
import type { Services } from '../../src/services';
import type { Clock } from '../../src/key-policies/policy';
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
  /** Where GET /metrics is served when METRICS_PORT is set. */
  metricsUrl: string | undefined;
  /** Every log line written so far, as raw JSON text. */
  logs: () => string;
  /** Drops this app's database (schema or PGlite instance) and closes everything. */
  close: () => Promise<void>;
}

/** Env-style overrides, e.g. `{ ACCESS_TOKEN_TTL: '2' }`. */
export type EnvOverrides = Record<string, string | undefined>;

const TEST_ISSUER = 'http://issuer.test';

/**
 * The real service, started as main.ts starts it (startServer), on a fresh, migrated database of its
 * own (a schema, or a PGlite instance), listening on a random loopback port. Call in beforeAll, and

 * `close()` in afterAll.
 *
 * With `options.joining`, a second instance of the same deployment instead: the same database,
 * MASTER_KEY and issuer, as behind a load balancer (only on a PostgreSQL server: see
 * onSharedServerOnly). Its close() leaves the database to the first. `options.clock` moves the key
 * policies' clock (expiry, idle, refills) for a test.
 */
export async function startTestApp(overrides: EnvOverrides = {}, options: { joining?: TestApp; clock?: Clock } = {}): Promise<TestApp> {
  const { joining } = options;
  const database = joining ? { url: joining.config.databaseUrl!, drop: async () => undefined } : await createTestDatabase();
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    BCRYPT_COST: '4',
    CLOCK_TOLERANCE: '0',
    ISSUER: TEST_ISSUER,
    MASTER_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'debug',
    // Suites fire hundreds of token requests from one address; rate-limit tests turn this on.
    RATE_LIMIT_ENABLED: 'false',
    // Pruning deletes revoked and expired sessions: a round firing between a test's two looks at the
    // tables would change what it compares. Tests of pruning run their rounds themselves (runMaintenance).
    MAINTENANCE_INTERVAL_SECONDS: '3600',
    DATABASE_URL: database.url,
    DATABASE_POOL_SIZE: String(testPoolSize(8)),
    ...(joining && { MASTER_KEY: joining.masterKey.toString('base64') }),
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
  const running = await startServer(config, logger, { clock: options.clock }).catch(async (err: unknown) => {
    await database.drop();
    throw err;
  });

  return {
    http: () => checkedAgainstOpenApi(request(running.url)),
    baseUrl: running.url,
    config,
    services: running.services,
    db: running.services.db,
    masterKey: config.masterKey!,
    logger,
    metrics: running.metrics,
    metricsUrl: running.metricsUrl,
    logs: () => captured.join(''),
    async close() {
      await running.stop();
      await database.drop();
    },
  };
}

/** Two instances of one deployment on one database, as behind a load balancer (see startTestApp's `joining`). */
export async function startTwoInstances(overrides: EnvOverrides = {}): Promise<[TestApp, TestApp]> {
  const a = await startTestApp(overrides);
  return [a, await startTestApp(overrides, { joining: a })];
}

/** Closes what startTwoInstances started (either may be missing when a start failed): the joining one first. */
export async function closeInstances(a: TestApp | undefined, b: TestApp | undefined): Promise<void> {
  await b?.close();
  await a?.close();
}
