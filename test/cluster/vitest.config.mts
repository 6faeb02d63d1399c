// `npm run test:cluster`: the service as production runs it, on the full Temporal server with
// the API and two workers as processes of their own; the fault suite's table of scenarios.
import { defineConfig } from 'vitest/config';
import base from '../vitest.config.mjs';
import { ScenarioTableReporter } from '../faults/support/table-reporter.mjs';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/cluster/**/*.test.ts'],
    exclude: [],
    // Jaeger too, for the traces of test/cluster/tracing.test.ts (built once, then cached).
    globalSetup: ['test/tracing/support/global-setup.ts', 'test/cluster/support/global-setup.ts'],
    hookTimeout: 20 * 60_000,
    testTimeout: 10 * 60_000,
    reporters: ['default', new ScenarioTableReporter()],
  },
});
