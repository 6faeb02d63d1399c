// `npm run test:ui`: the Temporal Web UI in headless Chromium (Debian's `chromium`), on the
// same backing services as the main suite.
import { configDefaults, defineConfig } from 'vitest/config';
import base from '../vitest.config.mjs';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/ui/**/*.test.ts'],
    exclude: [...configDefaults.exclude],
  },
});
