import type { Client } from '@temporalio/client';
import type { Sql } from '../src/db/sql';
import type { HttpSender } from '../src/delivery/sender';
import type { Logger } from '../src/logger';
import type { Metrics } from '../src/metrics';

/** What the activities are made from: one of each per worker process. */
export interface ActivityDependencies {
  sql: Sql;
  http: HttpSender;
  logger: Logger;
  /** The process's metrics (`GET /metrics`). */
  metrics: Metrics;
  /** The worker's Temporal client, to start and signal `webhook/{id}`. */
  client: Client;
}
