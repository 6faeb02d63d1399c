// `npm run record-histories`: the recorder on the same backing services as the main suite.
import { defineConfig } from 'vitest/config';
import base from '../../vitest.config.mjs';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/workflows/record/record-histories.ts'],
    exclude: [],
    testTimeout: 120_000,
  },
});
