import Router from '@koa/router';
import { countWebhooks, findWebhookByUrl, getWebhookSecret } from '../../db/webhooks';
import { findListIdsNotOwned } from '../../db/lists';
import type { Sql } from '../../db/sql';
import { newId } from '../../ids';
import type { Workflows } from '../../temporal/client';
import { DEFAULT_TOPICS, MAX_WEBHOOKS_PER_ACCOUNT } from '../../types';
import { apiErrors } from '../errors';
import type { ApiState } from '../middleware';
import { validate, validators } from '../schemas';

export interface WebhookRoutesDeps {
  sql: Sql;
  workflows: Workflows;
  /** Parses, normalises and checks a webhook URL against the SSRF policy, or throws UrlNotAllowedError. */
  checkUrl: (raw: string) => Promise<URL>;
  deliveryTimeoutMs: number;
}

/** The public webhook routes under /v3; the caller has authenticated the account. */
export function webhookRoutes({ sql, workflows, checkUrl, deliveryTimeoutMs }: WebhookRoutesDeps): Router<ApiState> {
  const router = new Router<ApiState>();

  // Register, or update the webhook with the same URL. Checks run in the contract's
  // order, so that no ping is sent for a request an earlier check rejects.
  router.post('/webhooks', async (ctx) => {
    const accountId = ctx.state.accountId!;
    const body = validate(validators.registerWebhookBody, ctx.request.body);
    const url = (await checkUrl(body.url)).href;
    const existing = await findWebhookByUrl(sql, accountId, url);
    if (!existing && (await countWebhooks(sql, accountId)) >= MAX_WEBHOOKS_PER_ACCOUNT) {
      throw apiErrors.webhookLimitExceeded(MAX_WEBHOOKS_PER_ACCOUNT);
    }
    const listIds = body.listIds ?? [];
    const invalidListIds = await findListIdsNotOwned(sql, accountId, listIds);
    if (invalidListIds.length > 0) throw apiErrors.invalidListIds(invalidListIds);

    const result = await workflows.registerWebhook({
      registrationId: newId('reg'),
      accountId,
      url,
      events: body.events ?? DEFAULT_TOPICS,
      listIds,
      deliveryTimeoutMs,
    });
    switch (result.outcome) {
      case 'created': {
        const secret = await getWebhookSecret(sql, result.webhook.id);
        ctx.status = 201;
        ctx.set('Location', `/v3/webhooks/${result.webhook.id}`);
        ctx.body = { ...result.webhook, secret };
        return;
      }
      case 'updated':
        ctx.body = result.webhook;
        return;
      case 'unreachable':
        throw apiErrors.webhookUnreachable(result.ping.error ?? 'non_2xx', result.ping.statusCode);
      case 'limit_exceeded':
        throw apiErrors.webhookLimitExceeded(MAX_WEBHOOKS_PER_ACCOUNT);
      case 'invalid_list_ids':
        throw apiErrors.invalidListIds(result.invalidListIds);
    }
  });

  return router;
}
