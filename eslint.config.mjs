// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The floors of src/, lowest first: a folder may import its own files, the folders on lower floors,
 * and the ground-floor files config.ts (with its sections in config/) and logger.ts; never a folder above it, nor the app files
 * at the top (app, services, runtime, maintenance, server, main). docs/development.md, "Floors", draws this list.
 */
const FLOORS = [
  'shared', // the words: principals, roles, scopes, errors, audit context, names, envelope, paths
  'cache',
  'crypto',
  'db',
  'audit-trail', // the audit writer, beside the database
  'http', // middleware: body parsing, validation, authentication, rate limits, errors
  'metrics',
  'signing-keys',
  'key-policies', // a key's policy: its checks (the judge), rate counters, credits, and their SQL
  'usage', // usage counts per key: summed in memory, flushed in batches; the usage route's service
  'dpop', // DPoP proofs (RFC 9449): checked with jose, spent once across instances
  'sessions',
  'bearer',
  'users',
  'api-keys',
  'verification', // POST /api/v1/keys/verify: a key judged by the policies' own judge and counters
  'tokens',
  'oauth',
  'console-session', // the console's session route: its refresh token in a cookie
  'audit-events',
  'webhooks', // endpoints API, the outbox's dispatcher, signing and address checks
  'health',
  'home', // GET /: the redirect to the console, or the index of links
  'openapi',
  'console', // serves the built admin console (its source is console/, outside src/)
  'api-reference', // serves the built API reference (Swagger UI; its build is api-reference/, outside src/)
  'cli', // the top: the command line may use the app files too
];
const APP_FILES = ['app', 'services', 'runtime', 'maintenance', 'server', 'main'];

const layering = FLOORS.slice(0, -1).map((folder, floor) => {
  const above = FLOORS.slice(floor + 1);
  const forbidden =
    folder === 'shared'
      ? ['../*'] // the ground floor imports nothing of ours
      : [...above.flatMap((f) => [`../${f}`, `../${f}/*`]), ...APP_FILES.map((f) => `../${f}`)];
  return {
    files: [`src/${folder}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: forbidden, message: `src/${folder}/ may import only lower floors (see FLOORS in eslint.config.mjs).` }] },
      ],
    },
  };
});

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'data/'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Read configuration through src/config.ts, never process.env directly.',
        },
      ],
    },
  },
  {
    // The config loader and test/CLI harnesses are the places allowed to read the environment.
    files: ['src/config.ts', 'test/**', 'jest.config.ts', 'bench/**', 'scripts/**'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // The ground-floor files import nothing of ours (config.ts only its own sections, in config/).
    files: ['src/logger.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['./*'], message: 'logger.ts is on the ground floor.' }] }] },
  },
  {
    files: ['src/config.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['./*', '!./config'], message: 'config.ts is on the ground floor: it imports only its sections in config/.' }] }] },
  },
  {
    files: ['src/config/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['../*'], message: 'src/config/ is on the ground floor: it imports only its own files.' }] }] },
  },
  ...layering,
);
