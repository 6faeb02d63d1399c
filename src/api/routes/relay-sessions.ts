import Router from '@koa/router';
import type { Middleware } from 'koa';
import { findListIdsNotOwned } from '../../db/lists';
import { createRelaySession, issueRelayTicket } from '../../db/relay-sessions';
import type { Sql } from '../../db/sql';
import type { SecretBox } from '../../secret-keys';
import { MAX_RELAY_SESSIONS_PER_ACCOUNT } from '../../limits';
import { TOPICS } from '../../topics';
import { apiErrors } from '../errors';
import { ROUTER_OPTIONS, type ApiState } from '../middleware';
import { validate, validators } from '../schemas';
import { findOwnWebhook } from './webhooks';

export interface RelaySessionRoutesDeps {
  sql: Sql;
  secrets: SecretBox;
  /** Reads the JSON body, on the routes that take one. */
  body: Middleware<ApiState>;
}

/**
 * The relay sessions of `svc-webhooks listen` under /v3 (docs/receiving.md): opening one, and
 * the tickets its connections are opened with. The connection itself is a WebSocket upgrade
 * that src/relay/hub.ts answers, outside these routes.
 */
export function relaySessionRoutes({ sql, secrets, body: jsonBody }: RelaySessionRoutesDeps): Router<ApiState> {
  const router = new Router<ApiState>(ROUTER_OPTIONS);

  // A webhook of the account with relay: true, closed until its first connection.
  router.post('/relay-sessions', jsonBody, async (ctx) => {
    const accountId = ctx.state.accountId!;
    const body = validate(validators.relaySessionBody, ctx.request.body ?? {});
    const listIds = body.listIds ?? [];
    const invalidListIds = await findListIdsNotOwned(sql, accountId, listIds);
    if (invalidListIds.length > 0) throw apiErrors.invalidListIds(invalidListIds);
    const session = await createRelaySession(sql, secrets, { accountId, events: body.events ?? [...TOPICS], listIds }, ctx.state.actor!);
    if (session === null) throw apiErrors.relayLimitExceeded(MAX_RELAY_SESSIONS_PER_ACCOUNT);
    ctx.status = 201;
    ctx.set('Location', `/v3/webhooks/${session.id}`);
    ctx.body = session;
  });

  // One ticket a connection: the first, and each reconnection's.
  router.post('/webhooks/:id/relay-connections', jsonBody, async (ctx) => {
    if (ctx.request.body !== undefined) validate(validators.emptyBody, ctx.request.body);
    const webhook = await findOwnWebhook(sql, ctx);
    if (!webhook.relay) throw apiErrors.notARelaySession();
    const { ticket, expiresAt } = await issueRelayTicket(sql, webhook.id);
    ctx.status = 201;
    ctx.body = { ticket, expiresAt: expiresAt.toISOString() };
  });

  return router;
}
