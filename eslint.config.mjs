// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

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
);
