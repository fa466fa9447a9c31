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
  // Each file gets its own schema, so files run in parallel safely.
  maxWorkers: 2,
  testTimeout: 30_000,
};

export default config;
