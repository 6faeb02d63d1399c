// The one way a list write comes in, whichever door it takes: the HTTP route
// (POST /internal/v3/lists/{listId}/writes) and the broker consumers (src/intake/brokers.ts)
// all call it. It returns once the write is durable (recorded and its workflow started): the
// route answers 202 then, a consumer acks then. A refusal is an ApiError (400, 404, 409), as
// the route answers it; any other error is a failure of ours, and the same writeId again
// (the upstream's retry, a broker's redelivery) finishes the write without delivering it twice.
import { apiErrors } from '../api/errors';
import { findUnknownAccountIds } from '../db/accounts';
import { recordListWrite } from '../db/list-writes';
import type { Sql } from '../db/sql';
import type { Logger } from '../logger';
import { metrics } from '../metrics';
import type { ListWriteBody, WriteAccepted } from '../objects';
import type { Workflows } from '../temporal/client';
import { annotateSpan } from '../tracing/spans';

/** What a write needs on its way in. */
export interface IntakeDeps {
  sql: Sql;
  workflows: Workflows;
  logger: Logger;
}

/** Records a write to `listId` and starts its workflow; `source` goes into its log line (a request id, a broker's message). */
export async function ingestListWrite(
  { sql, workflows, logger }: IntakeDeps,
  listId: string,
  body: ListWriteBody,
  source: Record<string, unknown>,
): Promise<WriteAccepted> {
  if (body.at !== undefined && Number.isNaN(Date.parse(body.at))) {
    throw apiErrors.validationFailed([{ path: '/at', message: 'is not a valid time' }]);
  }
  const memberIds = body.changes.flatMap((change) => (change.accountId ? [change.accountId] : []));
  const unknown = new Set(await findUnknownAccountIds(sql, [...new Set(memberIds)]));
  if (unknown.size > 0) {
    throw apiErrors.validationFailed(
      body.changes.flatMap((change, i) =>
        change.accountId && unknown.has(change.accountId) ? [{ path: `/changes/${i}/accountId`, message: 'is not a known account' }] : [],
      ),
    );
  }
  const received = performance.now();
  const result = await recordListWrite(sql, { listId, ...body });
  if (result.outcome === 'list_not_found') throw apiErrors.listNotFound();
  if (result.outcome === 'write_id_reused') throw apiErrors.writeIdReused();
  const recorded = performance.now();
  const repeated = result.outcome === 'repeated';
  annotateSpan({ 'list.id': listId, 'write.id': body.writeId, cursor: result.write.cursor, repeated });
  await workflows.startListWrite(result.write, result.recipients, { repeated });
  metrics.writesAccepted.inc({ repeated: String(repeated) });
  const { writeId, cursor, topics } = result.write;
  // Who a write went to (paused webhooks too: their deliveries are logged as skipped), and where its time went.
  logger.info({
    msg: 'list write',
    ...source,
    listId,
    writeId,
    cursor,
    topics,
    recipients: result.recipients.length,
    repeated,
    recordMs: Math.round(recorded - received),
    startMs: Math.round(performance.now() - recorded),
  });
  return { writeId, listId, cursor, topics };
}
