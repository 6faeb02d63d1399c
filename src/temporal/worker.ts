import path from 'node:path';
import { type NativeConnection, Worker, type WorkerOptions as SdkWorkerOptions } from '@temporalio/worker';
import type { WorkerTaskQueues } from '../config';
import { bulkTaskQueue } from '../contract/workflows';

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** The activities, made by the composition root (src/service.ts) from their dependencies. */
  activities: object;
  /** Deliveries under way at shutdown may run this long before they are given up as `internal`. */
  deliveryTimeoutMs: number;
  /**
   * Deliveries of the bulk task queue under way at once. Fewer than the main queue's (the SDK's
   * default, 100) leave the process's event loop and the cores to the small writes beside them.
   */
  bulkDeliveries: number;
  /** Which of the two queues this process serves. */
  queues: WorkerTaskQueues;
  /** The tracing interceptors and their sink (src/temporal/tracing.ts); none with tracing off. */
  tracing?: Pick<SdkWorkerOptions, 'interceptors' | 'sinks'>;
}

/** A worker's queue and, for the bulk one, its delivery slots (the SDK's default otherwise). */
export interface QueueSettings {
  taskQueue: string;
  maxConcurrentLocalActivityExecutions?: number;
}

/** The queues one process serves: the task queue, its bulk task queue (large writes and recoveries), or both. */
export function queueSettings({
  taskQueue,
  bulkDeliveries,
  queues,
}: Pick<WorkerOptions, 'taskQueue' | 'bulkDeliveries' | 'queues'>): QueueSettings[] {
  const main: QueueSettings = { taskQueue };
  const bulk: QueueSettings = { taskQueue: bulkTaskQueue(taskQueue), maxConcurrentLocalActivityExecutions: bulkDeliveries };
  return { both: [main, bulk], main: [main], bulk: [bulk] }[queues];
}

/** The workers of one process, one per queue it serves, each running workflows/ and the same activities. */
export async function createWorkers(options: WorkerOptions): Promise<Worker[]> {
  const common = {
    connection: options.connection,
    namespace: options.namespace,
    // A directory, so the bundler finds index.ts in the sources and index.js when compiled.
    workflowsPath: path.join(__dirname, '../../workflows'),
    activities: options.activities,
    // A stopping worker (a deploy, a scale-down) lets its deliveries finish rather than
    // losing them as our own failures.
    shutdownGraceTime: options.deliveryTimeoutMs + 1_000,
    ...options.tracing,
  };
  return Promise.all(queueSettings(options).map((settings) => Worker.create({ ...common, ...settings })));
}
