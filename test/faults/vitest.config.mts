// `npm run test:faults`: the fault suite (issue 6) on the same backing services as the
// main suite (one Temporal dev server and one database per run, one file at a time),
// ending with the table of scenarios that ScenarioTableReporter prints.
import { configDefaults, defineConfig } from 'vitest/config';
import base from '../vitest.config.mjs';
import { ScenarioTableReporter } from './support/table-reporter.mjs';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/faults/**/*.test.ts'],
    exclude: [...configDefaults.exclude],
    reporters: ['default', new ScenarioTableReporter()],
  },
});
