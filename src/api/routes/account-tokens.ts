import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Sql } from '../../db/sql';
import { createToken, deleteToken, listTokens } from '../../db/tokens';
import { idPattern } from '../../ids';
import { MAX_TOKENS_PER_ACCOUNT } from '../../limits';
import type { AccountAccess } from '../account-access';
import { apiErrors } from '../errors';
import { ROUTER_OPTIONS, type ApiState } from '../middleware';
import { validate, validators } from '../schemas';

export interface AccountTokenRoutesDeps {
  sql: Sql;
  access: Pick<AccountAccess, 'flushUsage' | 'forgetToken'>;
  /** Reads the JSON body, on the routes that take one. */
  body: Middleware<ApiState>;
}

const TOKEN_ID = new RegExp(idPattern('tkn'));

/** The caller's API tokens under /v3/account/tokens; the caller has authenticated the account. */
export function accountTokenRoutes({ sql, access, body: jsonBody }: AccountTokenRoutesDeps): Router<ApiState> {
  const router = new Router<ApiState>(ROUTER_OPTIONS);

  router.get('/account/tokens', async (ctx) => {
    await access.flushUsage(); // this process's lastUsedAt, this request's included
    ctx.body = { data: await listTokens(sql, ctx.state.accountId!) };
  });

  router.post('/account/tokens', jsonBody, async (ctx) => {
    const body = validate(validators.createTokenBody, ctx.request.body);
    const expiresAt = body.expiresAt === undefined ? null : new Date(body.expiresAt);
    if (expiresAt !== null && !(expiresAt.getTime() > Date.now())) {
      throw apiErrors.validationFailed([{ path: '/expiresAt', message: 'must be a valid time in the future' }]);
    }
    const created = await createToken(sql, ctx.state.accountId!, { name: body.name, expiresAt });
    if (created === null) throw apiErrors.tokenLimitExceeded(MAX_TOKENS_PER_ACCOUNT);
    ctx.status = 201;
    ctx.body = created;
  });

  // Every API process refuses the token from now on (see token-cache.ts); this one without
  // waiting for the notification.
  router.delete('/account/tokens/:tokenId', async (ctx) => {
    const tokenId = ctx.params.tokenId;
    const tokenHash = TOKEN_ID.test(tokenId) ? await deleteToken(sql, ctx.state.accountId!, tokenId) : null;
    if (tokenHash === null) throw apiErrors.tokenNotFound();
    access.forgetToken(tokenHash);
    ctx.status = 204;
  });

  return router;
}
