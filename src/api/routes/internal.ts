import Router from '@koa/router';
import type { Middleware } from 'koa';
import { createAccount, findUnknownAccountIds } from '../../db/accounts';
import { recordListWrite } from '../../db/list-writes';
import { deleteList, putList } from '../../db/lists';
import type { Sql } from '../../db/sql';
import type { Workflows } from '../../temporal/client';
import type { Logger } from '../../logger';
import { metrics } from '../../metrics';
import { annotateSpan } from '../../tracing/spans';
import { apiErrors } from '../errors';
import { ROUTER_OPTIONS, type ApiState } from '../middleware';
import { validate, validators } from '../schemas';

/** The internal API under /internal/v3, for upstream services; the caller holds INTERNAL_API_TOKEN. */
export interface InternalRoutesDeps {
  sql: Sql;
  workflows: Workflows;
  logger: Logger;
  /** Reads the JSON body, on the routes that take one. */
  body: Middleware<ApiState>;
}

export function internalRoutes({ sql, workflows, logger, body: jsonBody }: InternalRoutesDeps): Router<ApiState> {
  const router = new Router<ApiState>(ROUTER_OPTIONS);

  router.post('/accounts', jsonBody, async (ctx) => {
    const { name, notificationEmail } = validate(validators.createAccountBody, ctx.request.body);
    ctx.status = 201;
    ctx.body = await createAccount(sql, name, notificationEmail);
  });

  router.put('/lists/:listId', jsonBody, async (ctx) => {
    const listId = validate(validators.id, ctx.params.listId, '/params/listId');
    const body = validate(validators.putListBody, ctx.request.body);
    const memberAccountIds = body.memberAccountIds ?? [];
    const unknown = await findUnknownAccountIds(sql, [body.ownerAccountId, ...memberAccountIds]);
    if (unknown.length > 0) {
      throw apiErrors.validationFailed(
        unknown.map((id) => ({
          path: id === body.ownerAccountId ? '/ownerAccountId' : `/memberAccountIds/${memberAccountIds.indexOf(id)}`,
          message: 'is not a known account',
        })),
      );
    }
    const { list, created } = await putList(sql, { id: listId, ownerAccountId: body.ownerAccountId, memberAccountIds });
    ctx.status = created ? 201 : 200;
    ctx.body = list;
  });

  // 202 only once the write is durable: recorded in PostgreSQL and its workflow started.
  // If either step fails the upstream retries with the same writeId, which finishes it.
  router.post('/lists/:listId/writes', jsonBody, async (ctx) => {
    const listId = validate(validators.id, ctx.params.listId, '/params/listId');
    const body = validate(validators.listWriteBody, ctx.request.body);
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
      requestId: ctx.state.requestId,
      listId,
      writeId,
      cursor,
      topics,
      recipients: result.recipients.length,
      repeated,
      recordMs: Math.round(recorded - received),
      startMs: Math.round(performance.now() - recorded),
    });
    ctx.status = 202;
    ctx.body = { writeId, listId, cursor, topics };
  });

  router.delete('/lists/:listId', async (ctx) => {
    const listId = validate(validators.id, ctx.params.listId, '/params/listId');
    if (!(await deleteList(sql, listId))) throw apiErrors.listNotFound();
    ctx.status = 204;
  });

  return router;
}
