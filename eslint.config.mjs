import js from '@eslint/js';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'libs/a2a-protocol/src/generated/**',
      'scripts/**/*.mjs',
      'examples/**/*.mjs',
      'eslint.config.mjs',
      '.kafka/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-extraneous-class': 'off',
      'import-x/no-cycle': 'error',
      eqeqeq: 'error',
      curly: 'error',
      'object-shorthand': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Only libs/config reads process.env.',
        },
      ],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@lib/*/src/*', '@lib/*/src'],
              message: 'Import a lib through its alias only.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['libs/config/src/**/*.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // Lib boundaries: libs never import apps; the domain imports no framework or Node I/O.
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/apps/**'], message: 'A lib never imports an app.' },
            {
              group: ['@lib/*/src/*', '@lib/*/src'],
              message: 'Import a lib through its alias only.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['libs/task-domain/src/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', '@nestjs/*', 'pg', 'kafkajs', 'bullmq', '@grpc/*'],
              message: 'task-domain is pure.',
            },
            {
              group: ['@lib/*', '!@lib/a2a-protocol', '!@lib/ids'],
              message: 'task-domain imports only @lib/a2a-protocol and @lib/ids.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['libs/ids/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^[^.]', message: 'libs/ids depends on nothing.' }] },
      ],
    },
  },
  {
    // Apps import other apps only in the standalone composition root.
    files: ['apps/ingress/**/*.ts', 'apps/task-service/**/*.ts', 'apps/agents/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../../*/src/*', '../../../*/src/*'],
              message: 'An app never imports another app.',
            },
            {
              group: ['@lib/*/src/*', '@lib/*/src'],
              message: 'Import a lib through its alias only.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', 'test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-restricted-syntax': 'off',
    },
  },
);
