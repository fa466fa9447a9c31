/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  // Jest's own report, then one line per reason why tests were skipped (test/helpers/skips.ts).
  reporters: ['default', '<rootDir>/test/skip-reporter.cjs'],
  // Each file gets its own schema, so files run in parallel safely on a PostgreSQL server. Without
  // TEST_DATABASE_URL the suite may run on PGlite, which serves every test app from one process a
  // statement at a time: two workers contending for it made timing-bound tests flaky (.ci/run), so one.
  maxWorkers: process.env.TEST_DATABASE_URL ? 2 : 1,
  testTimeout: 30_000,
};

export default config;
