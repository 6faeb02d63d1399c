import type { Client } from '@temporalio/client';
import type { ProbePlan } from '../src/contract/payloads';
import type { Sql } from '../src/db/sql';
import type { CredentialPresenter } from '../src/delivery/credential-presenter';
import type { HttpSender } from '../src/delivery/sender';
import type { Logger } from '../src/logger';
import type { Metrics } from '../src/metrics';
import type { Mailer } from '../src/notices/mailer';
import type { SecretBox } from '../src/secret-keys';

/** What the activities are made from: one of each per worker process. */
export interface ActivityDependencies {
  sql: Sql;
  /**
   * The pool of the delivery bookkeeping's gathered claims and log rows (createDeliveryBatcher),
   * apart from `sql` so that its statements are cut off at BOOKKEEPING_STATEMENT_TIMEOUT_MS.
   */
  bookkeepingSql: Sql;
  http: HttpSender;
  /** Receivers' credentials, opened and ready to present (tokens and client-certificate pools), per webhook that has any. */
  credentials: CredentialPresenter;
  /** Opens the signing secrets read with each attempt (keeping those it opened), and seals them again under the first key. */
  secrets: SecretBox;
  logger: Logger;
  /** The process's metrics (`GET /metrics`). */
  metrics: Metrics;
  /** The worker's Temporal client, to start and signal `webhook/{id}` and start `notice/{id}`. */
  client: Client;
  notices: NoticeMailing;
  /** PROBE_INTERVALS, PROBE_MAX_DAYS and the delivery deadline; null: probing is off. */
  probePlan: ProbePlan | null;
  /** OUTCOME_SETTLE_MS: how long the `webhook/{id}` a registration starts holds outcomes before it counts them. */
  outcomeSettleMs: number;
}

/** How notices are mailed: NOTIFY_FROM, NOTIFY_MAX_PER_HOUR, PUBLIC_BASE_URL, and SMTP_URL's client. */
export interface NoticeMailing {
  /** Absent without SMTP_URL: notices are recorded and logged, not mailed. */
  mailer: Mailer | undefined;
  from: string;
  maxPerHour: number;
  /** The dashboard's address, linked from every mail. */
  dashboardUrl: string;
}
