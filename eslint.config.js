// Type-aware lint over the whole tree; generated protobuf types are excluded because they are checked for freshness instead.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { boundariesConfig } from './eslint.boundaries.js';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'src/grpc/generated/**', 'coverage/**', 'bin/**', 'eslint.config.js', 'eslint.boundaries.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
    },
  },
  boundariesConfig,
  // The admin console's browser modules (src/console/public) are served as written, with no build: plain JavaScript
  // with JSDoc types, linted without type information (they are outside tsconfig.json, which is for Node).
  {
    files: ['src/console/public/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'module',
      globals: Object.fromEntries(
        [
          'window',
          'document',
          'location',
          'history',
          'navigator',
          'sessionStorage',
          'fetch',
          'Headers',
          'URL',
          'URLSearchParams',
          'Blob',
          'Node',
          'Element',
          'HTMLElement',
          'Event',
          'EventListener',
          'Intl',
          'console',
          'setTimeout',
          'clearTimeout',
        ].map((name) => [name, 'readonly']),
      ),
    },
    rules: {
      ...tseslint.configs.disableTypeChecked.rules,
      'no-undef': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
