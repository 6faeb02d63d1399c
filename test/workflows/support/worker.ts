// A worker running the real workflows with activities the test passes, on the run's
// Temporal dev server and a task queue of its own: the workflows' rules alone, with no
// database or receiver behind them.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import type { ActivityTypes } from '../../../src/contract/activities';
import { clientTracing, workerTracing } from '../../../src/temporal/tracing';
import { TRACING_OFF, type Tracing } from '../../../src/tracing/setup';

export interface WorkflowWorker {
  client: Client;
  taskQueue: string;
  stop(): Promise<void>;
}

/** With `tracing` on, the worker and its client carry the service's tracing interceptors. */
export async function startWorkflowWorker(activities: Partial<ActivityTypes>, tracing: Tracing = TRACING_OFF): Promise<WorkflowWorker> {
  const address = inject('temporalAddress');
  const taskQueue = `workflow-test-${randomBytes(4).toString('hex')}`;
  const nativeConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: nativeConnection,
    taskQueue,
    workflowsPath: path.resolve(__dirname, '../../../workflows'),
    activities,
    // Activities left hanging by a test end at shutdown, through their cancellation.
    shutdownGraceTime: '100 ms',
    ...workerTracing(tracing),
  });
  const running = worker.run();
  const connection = await Connection.connect({ address });
  return {
    client: new Client({ connection, ...clientTracing(tracing) }),
    taskQueue,
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
      await nativeConnection.close();
    },
  };
}
