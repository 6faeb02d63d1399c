import { installTemporalRuntime } from '../../src/temporal/runtime';
import { setSdkMetricsUrl } from './runtime';

// Each test file runs in a process of its own; the Temporal runtime may be installed once per process.
setSdkMetricsUrl(await installTemporalRuntime());
