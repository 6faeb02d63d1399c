import net from 'node:net';
import { DefaultLogger, Runtime } from '@temporalio/worker';

/** A loopback port free now, for the Temporal SDK's metrics exporter. */
async function freeLoopbackPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * The Temporal runtime of this process: its logs at WARN, its metrics exported on a loopback
 * port that /metrics reads. Shutdown is ours, in order: the SDK must not drain the worker on its own.
 */
export async function installTemporalRuntime(): Promise<string> {
  const port = await freeLoopbackPort();
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    shutdownSignals: [],
    telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${port}` } } },
  });
  return `http://127.0.0.1:${port}/metrics`;
}
