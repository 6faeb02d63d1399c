// `npm run lint`: typescript-eslint with type information, over everything TypeScript that
// is compiled or tested, the benchmark (scripts/bench) included. The plain JavaScript of
// receivers/typescript/ (the example receiver) is left out, and so is the generated
// src/client/generated/api-types.ts (openapi-typescript's types, which tsc still checks).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** no-restricted-globals entries for `names`, each with the reason workflow code must not use it. */
function sandboxGlobals(reason, names) {
  return names.map((name) => ({ name, message: `${name} is ${reason}.` }));
}

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.data/**',
      'receivers/typescript/**/*.{js,mjs,cjs}',
      'eslint.config.mjs',
      'src/client/generated/api-types.ts',
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
    // workflows/ is the code that runs in Temporal's deterministic sandbox: the workflows, the
    // tracing interceptors bundled beside them when tracing is on, and what they import. At run
    // time it may import only the workflow API, its own files and the contract (src/contract/:
    // what crosses into workflows, replay-sensitive), and, for the interceptors, the failure
    // types and payload converter of @temporalio/common (which the workflow API is built on) and
    // the span names of Temporal's OpenTelemetry interceptors (their workflow definitions, which
    // load no OpenTelemetry); anything else (activities, the database, Node) only as a type.
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex:
                '^(?!@temporalio/(workflow|common)$|@temporalio/interceptors-opentelemetry/lib/workflow/definitions$|\\./[\\w-]+$|\\.\\./src/contract/[\\w-]+$)',
              allowTypeImports: true,
              message:
                "Workflow code may import at run time only @temporalio/workflow, @temporalio/common, the OpenTelemetry interceptors' workflow definitions, other workflow files and src/contract/; import anything else with `import type`.",
            },
          ],
        },
      ],
      // The sandbox is a bare V8 context with the SDK's globals: Date, Math.random, setTimeout and
      // clearTimeout made deterministic, console, AsyncLocalStorage, assert, URL, URLSearchParams,
      // TextEncoder, TextDecoder, AbortController. @types/node types more, which fail or break
      // replay there (require() is already forbidden everywhere by no-require-imports).
      'no-restricted-globals': [
        'error',
        ...sandboxGlobals(
          'absent from the workflow sandbox (a ReferenceError there): sleep() or condition() for time, an activity for anything else',
          ['process', 'Buffer', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'queueMicrotask', 'structuredClone'],
        ),
        ...sandboxGlobals(
          'absent from the workflow sandbox: I/O, random bytes and clocks belong in an activity (uuid4() and Date are replay-safe)',
          ['fetch', 'crypto', 'performance'],
        ),
        ...sandboxGlobals('made by the SDK to throw DeterminismViolationError: garbage collection differs between a run and its replay', [
          'WeakRef',
          'FinalizationRegistry',
        ]),
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
