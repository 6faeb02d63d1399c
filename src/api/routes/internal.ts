import Router from '@koa/router';
import { createAccount, findUnknownAccountIds } from '../../db/accounts';
import { deleteList, putList } from '../../db/lists';
import type { Sql } from '../../db/sql';
import { apiErrors } from '../errors';
import type { ApiState } from '../middleware';
import { validate, validators } from '../schemas';

/** The internal API under /internal/v3, for upstream services; the caller holds INTERNAL_API_TOKEN. */
export function internalRoutes({ sql }: { sql: Sql }): Router<ApiState> {
  const router = new Router<ApiState>();

  router.post('/accounts', async (ctx) => {
    const { name } = validate(validators.createAccountBody, ctx.request.body);
    ctx.status = 201;
    ctx.body = await createAccount(sql, name);
  });

  router.put('/lists/:listId', async (ctx) => {
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

  router.delete('/lists/:listId', async (ctx) => {
    const listId = validate(validators.id, ctx.params.listId, '/params/listId');
    if (!(await deleteList(sql, listId))) throw apiErrors.listNotFound();
    ctx.status = 204;
  });

  return router;
}
