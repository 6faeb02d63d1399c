import Router from '@koa/router';
import type { Middleware } from 'koa';
import { findAccount, setNotificationEmail } from '../../db/accounts';
import { listAuditLog } from '../../db/audit-log';
import { listNotices } from '../../db/notices';
import type { Sql } from '../../db/sql';
import type { Account } from '../../objects';
import { apiErrors } from '../errors';
import { ROUTER_OPTIONS, type ApiState } from '../middleware';
import { pageOf } from '../paging';
import { validate, validators } from '../schemas';

export interface AccountRoutesDeps {
  sql: Sql;
  /** Reads the JSON body, on the routes that take one. */
  body: Middleware<ApiState>;
}

/** The caller's own account under /v3: where its notices go, the notices, and the audit log. */
export function accountRoutes({ sql, body: jsonBody }: AccountRoutesDeps): Router<ApiState> {
  const router = new Router<ApiState>(ROUTER_OPTIONS);

  // The token was just found, so the account exists; one deleted since is as unknown as a bad token.
  const orUnauthorized = (account: Account | null): Account => {
    if (!account) throw apiErrors.unauthorized();
    return account;
  };

  router.get('/account', async (ctx) => {
    ctx.body = orUnauthorized(await findAccount(sql, ctx.state.accountId!));
  });

  router.patch('/account', jsonBody, async (ctx) => {
    const { notificationEmail } = validate(validators.updateAccountBody, ctx.request.body);
    ctx.body = orUnauthorized(await setNotificationEmail(sql, ctx.state.accountId!, notificationEmail, ctx.state.actor!));
  });

  router.get('/account/notices', async (ctx) => {
    const { limit, ...filters } = validate(validators.noticesQuery, { ...ctx.query }, '/query');
    ctx.body = await pageOf(limit, (rows) => listNotices(sql, ctx.state.accountId!, { ...filters, limit: rows }));
  });

  // Who changed what in the account, newest first: only ever the caller's own account's entries.
  router.get('/account/audit-log', async (ctx) => {
    const { limit, ...filters } = validate(validators.auditLogQuery, { ...ctx.query }, '/query');
    ctx.body = await pageOf(limit, (rows) => listAuditLog(sql, ctx.state.accountId!, { ...filters, limit: rows }));
  });

  return router;
}
