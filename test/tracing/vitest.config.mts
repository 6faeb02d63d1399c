// `npm run test:tracing`: traces read back from a real trace backend, Jaeger v2
// (test/support/jaeger.ts), on the same backing services as the main suite. Jaeger is built
// first (minutes, once per version), before the shared services start.
import { configDefaults, defineConfig } from 'vitest/config';
import base from '../vitest.config.mjs';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/tracing/**/*.test.ts'],
    exclude: [...configDefaults.exclude],
    globalSetup: ['test/tracing/support/global-setup.ts', 'test/support/global-setup.ts'],
  },
});
