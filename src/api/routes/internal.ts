import Router from '@koa/router';
import type { Middleware } from 'koa';
import { createAccount, findUnknownAccountIds } from '../../db/accounts';
import { deleteList, putList } from '../../db/lists';
import type { Sql } from '../../db/sql';
import type { Workflows } from '../../temporal/client';
import type { Logger } from '../../logger';
import { ingestListWrite } from '../../intake/list-writes';
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
    const accepted = await ingestListWrite({ sql, workflows, logger }, listId, body, { requestId: ctx.state.requestId });
    ctx.status = 202;
    ctx.body = accepted;
  });

  router.delete('/lists/:listId', async (ctx) => {
    const listId = validate(validators.id, ctx.params.listId, '/params/listId');
    if (!(await deleteList(sql, listId))) throw apiErrors.listNotFound();
    ctx.status = 204;
  });

  return router;
}
