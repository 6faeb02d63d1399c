// `npm run lint`: typescript-eslint with type information, over everything TypeScript that
// is compiled or tested, the benchmark (scripts/bench) included. The plain JavaScript of
// receivers/typescript/ (the example receiver) is left out, and so is the generated
// src/client/api-types.ts (openapi-typescript's types, which tsc still checks).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.data/**',
      'receivers/typescript/**/*.{js,mjs,cjs}',
      'eslint.config.mjs',
      'src/client/api-types.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // Tests read the API's JSON as `any` on purpose (a test checks the shape, not the type),
    // and their fake activities implement async interfaces without awaiting anything.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: at run time it may import only
    // the workflow API, other workflow files and the contract (src/contract/: what crosses
    // into workflows, replay-sensitive); anything else (activities, the database, Node) only
    // as a type.
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!@temporalio/workflow$|\\./[\\w-]+$|\\.\\./src/contract/[\\w-]+$)',
              allowTypeImports: true,
              message:
                'Workflow code may import at run time only @temporalio/workflow, other workflow files and src/contract/; import anything else with `import type`.',
            },
          ],
        },
      ],
    },
  },
  {
    // The contract is bundled into the workflows' sandbox: at run time it may import only
    // Temporal's message and search-attribute definitions and itself.
    files: ['src/contract/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!@temporalio/(workflow|common)$|\\./[\\w-]+$)',
              allowTypeImports: true,
              message: 'The contract may import at run time only @temporalio/workflow, @temporalio/common and its own files.',
            },
          ],
        },
      ],
    },
  },
);
