import Router from '@koa/router';
import type { Sql } from '../../db/sql';
import { findUsage } from '../../db/usage';
import { USAGE_DAYS } from '../../limits';
import type { AccountAccess } from '../account-access';
import { ROUTER_OPTIONS, type ApiState } from '../middleware';

/** The fair-use meter under /v3/account/usage; the caller has authenticated the account. */
export function accountUsageRoutes({ sql, access }: { sql: Sql; access: Pick<AccountAccess, 'flushUsage'> }): Router<ApiState> {
  const router = new Router<ApiState>(ROUTER_OPTIONS);
  router.get('/account/usage', async (ctx) => {
    await access.flushUsage(); // this process's counts, this request included
    ctx.body = { data: await findUsage(sql, ctx.state.accountId!, USAGE_DAYS) };
  });
  return router;
}
