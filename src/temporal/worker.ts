import path from 'node:path';
import { type NativeConnection, Worker } from '@temporalio/worker';
import type { Activities } from '../../activities';

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: Activities;
}

/** The worker that runs workflows/ and activities/ on the task queue. */
export function createWorker(options: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    // A directory, so the bundler finds index.ts in the sources and index.js when compiled.
    workflowsPath: path.join(__dirname, '../../workflows'),
    activities: options.activities,
  });
}
