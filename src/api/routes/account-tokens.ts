import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Sql } from '../../db/sql';
import { createToken, deleteToken, findToken, listTokens } from '../../db/tokens';
import { idPattern } from '../../ids';
import { MAX_TOKENS_PER_ACCOUNT } from '../../limits';
import { inScopeOrder, lackingScope } from '../../scopes';
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

/**
 * The caller's API tokens under /v3/account/tokens, and the calling token itself at
 * /v3/account/token; the caller has authenticated the account, with the scopes the route needs.
 */
export function accountTokenRoutes({ sql, access, body: jsonBody }: AccountTokenRoutesDeps): Router<ApiState> {
  const router = new Router<ApiState>(ROUTER_OPTIONS);

  router.get('/account/tokens', async (ctx) => {
    await access.flushUsage(); // this process's lastUsedAt, this request's included
    ctx.body = { data: await listTokens(sql, ctx.state.accountId!) };
  });

  // What a token may do, for any token: the dashboard shows only what it may do.
  router.get('/account/token', async (ctx) => {
    await access.flushUsage(); // this process's lastUsedAt, this request's included
    const token = await findToken(sql, ctx.state.accountId!, ctx.state.tokenId!);
    if (!token) throw apiErrors.unauthorized(); // revoked since it was checked
    ctx.body = token;
  });

  router.post('/account/tokens', jsonBody, async (ctx) => {
    const body = validate(validators.createTokenBody, ctx.request.body);
    const expiresAt = body.expiresAt === undefined ? null : new Date(body.expiresAt);
    if (expiresAt !== null && !(expiresAt.getTime() > Date.now())) {
      throw apiErrors.validationFailed([{ path: '/expiresAt', message: 'must be a valid time in the future' }]);
    }
    // A token grants at most what it holds: a narrow token never makes a broader one.
    const held = ctx.state.scopes!;
    const scopes = body.scopes ?? held;
    const lacking = lackingScope(held, scopes);
    if (lacking) throw apiErrors.scopeNotGrantable(lacking);
    const created = await createToken(
      sql,
      ctx.state.accountId!,
      { name: body.name, expiresAt, scopes: inScopeOrder(scopes) },
      ctx.state.actor!,
    );
    if (created === null) throw apiErrors.tokenLimitExceeded(MAX_TOKENS_PER_ACCOUNT);
    ctx.status = 201;
    ctx.body = created;
  });

  // Every API process refuses the token from now on (see token-cache.ts); this one without
  // waiting for the notification.
  router.delete('/account/tokens/:tokenId', async (ctx) => {
    const tokenId = ctx.params.tokenId;
    const tokenHash = TOKEN_ID.test(tokenId) ? await deleteToken(sql, ctx.state.accountId!, tokenId, ctx.state.actor!) : null;
    if (tokenHash === null) throw apiErrors.tokenNotFound();
    access.forgetToken(tokenHash);
    ctx.status = 204;
  });

  return router;
}
