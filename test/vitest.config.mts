import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  // The package's own exports, as a receiver imports them, read from the sources.
  resolve: {
    alias: {
      'svc-webhooks/verify': fileURLToPath(new URL('../src/delivery/signing.ts', import.meta.url)),
      'svc-webhooks/receiver': fileURLToPath(new URL('../receivers/typescript/index.ts', import.meta.url)),
    },
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The fault suite, the cluster, the browser tests and the tracing tests have commands of
    // their own: npm run test:faults, npm run test:cluster, npm run test:ui, npm run test:tracing.
    exclude: [...configDefaults.exclude, 'test/faults/**', 'test/cluster/**', 'test/ui/**', 'test/tracing/**'],
    // The Temporal worker's native bridge needs processes, not threads; suites share one
    // dev server and one database, so they run one file at a time.
    pool: 'forks',
    fileParallelism: false,
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/setup-file.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
