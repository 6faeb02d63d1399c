import { DefaultLogger, Runtime } from '@temporalio/worker';

// Each test file runs in a process of its own; the Temporal runtime may be installed once per process.
Runtime.install({ logger: new DefaultLogger('WARN') });
