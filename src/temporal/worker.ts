import path from 'node:path';
import { type NativeConnection, Worker } from '@temporalio/worker';

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** The activities, made by the composition root (src/service.ts) from their dependencies. */
  activities: object;
  /** Deliveries under way at shutdown may run this long before they are given up as `internal`. */
  deliveryTimeoutMs: number;
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
    // A stopping worker (a deploy, a scale-down) lets its deliveries finish rather than
    // losing them as our own failures.
    shutdownGraceTime: options.deliveryTimeoutMs + 1_000,
  });
}
