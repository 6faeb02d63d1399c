import Router from '@koa/router';
import type { Middleware } from 'koa';
import { findDelivery, findDeliveryDetail, listDeliveries } from '../../db/deliveries';
import { decodePosition, encodePosition, oldestFeedPoint, pointBefore } from '../../db/event-feed';
import { findListIdsNotOwned, isListOfAccount } from '../../db/lists';
import type { Sql } from '../../db/sql';
import { beginRegistration } from '../../db/registrations';
import { findWebhookHealthHours, NO_HEALTH } from '../../db/webhook-health';
import {
  countWebhooks,
  deleteWebhookRow,
  findWebhook,
  findWebhookByUrl,
  findSealedSecret,
  listWebhooks,
  replaceWebhookSecret,
  updateWebhookSettings,
} from '../../db/webhooks';
import { idPattern, newId } from '../../ids';
import type { SecretBox } from '../../secret-keys';
import { newSigningSecret } from '../../secrets';
import type { RegisteredWebhook } from '../../contract/payloads';
import type { Workflows } from '../../temporal/client';
import { DEFAULT_TOPICS, type Topic } from '../../topics';
import { MAX_WEBHOOKS_PER_ACCOUNT } from '../../limits';
import { isRedeliverable, type Webhook } from '../../objects';
import { UrlNotAllowedError } from '../../delivery/url-policy';
import { credentialIssues, credentialsChangeOf, isChange, type CredentialsChange } from '../../delivery/receiver-credentials';
import { metrics } from '../../metrics';
import { ApiError, apiErrors } from '../errors';
import { feedPage, type FeedRequest, type FeedWaits } from '../event-feed';
import { pageOf } from '../paging';
import { ROUTER_OPTIONS, type ApiContext, type ApiState } from '../middleware';
import { validate, validators } from '../schemas';

export interface WebhookRoutesDeps {
  sql: Sql;
  secrets: SecretBox;
  workflows: Workflows;
  /** Parses, normalises and checks a webhook URL against the SSRF policy, or throws UrlNotAllowedError. */
  checkUrl: (raw: string) => Promise<URL>;
  deliveryTimeoutMs: number;
  /** The long polls of the event feed. */
  feedWaits: FeedWaits;
  /** Reads the JSON body, on the routes that take one. */
  body: Middleware<ApiState>;
}

/** The public webhook routes under /v3; the caller has authenticated the account. */
export function webhookRoutes({
  sql,
  secrets,
  workflows,
  checkUrl,
  deliveryTimeoutMs,
  feedWaits,
  body: jsonBody,
}: WebhookRoutesDeps): Router<ApiState> {
  const router = new Router<ApiState>(ROUTER_OPTIONS);

  const ownWebhook = (ctx: PathContext) => findOwnWebhook(sql, ctx);

  /**
   * The webhook a registration stored, as the API answers it. Results recorded before relay
   * sessions lack `relay` (a registration never makes one), those recorded before receivers'
   * credentials lack `auth` and `clientCertificate` (none), and those recorded before health,
   * `health`: it is read now.
   */
  async function answered(accountId: string, webhook: RegisteredWebhook): Promise<Webhook> {
    const health = webhook.health ?? (await findWebhook(sql, accountId, webhook.id))?.health ?? NO_HEALTH;
    return { relay: false, auth: null, clientCertificate: null, ...webhook, health };
  }

  /**
   * The receiver's credentials a body sets, checked past its schema, the token URL against the
   * SSRF policy too (it is fetched as a receiver is): VALIDATION_FAILED at the path of each issue.
   */
  async function checkedCredentials(body: { auth?: unknown; clientCertificate?: unknown }): Promise<CredentialsChange> {
    const change = credentialsChangeOf(body);
    const issues = credentialIssues(change);
    if (issues.length === 0 && change.auth?.type === 'oauth2') {
      await checkUrl(change.auth.tokenUrl).catch((error: unknown) => {
        if (!(error instanceof UrlNotAllowedError)) throw error;
        issues.push({ path: '/auth/tokenUrl', message: error.message });
      });
    }
    if (issues.length > 0) throw apiErrors.validationFailed(issues);
    return change;
  }

  /** Where a page of the webhook's feed starts: `position`, unless it is none of the feed's (400) or older than what is kept (410). */
  async function feedAfter(webhookId: string, position: string): Promise<FeedRequest['after']> {
    const point = decodePosition(webhookId, position);
    if (point === 'malformed' || point === 'other_webhook') {
      throw apiErrors.validationFailed([{ path: '/query/after', message: "is not a position of this webhook's feed" }]);
    }
    const oldest = await oldestFeedPoint(sql, webhookId);
    if (oldest !== null && pointBefore(point, oldest)) throw apiErrors.positionExpired(encodePosition(webhookId, oldest));
    return { position, point };
  }

  async function assertListsOwned(accountId: string, listIds: string[]): Promise<void> {
    const invalidListIds = await findListIdsNotOwned(sql, accountId, listIds);
    if (invalidListIds.length > 0) throw apiErrors.invalidListIds(invalidListIds);
  }

  // Register, or update the webhook with the same URL. Checks run in the contract's
  // order, so that no ping is sent for a request an earlier check rejects.
  router.post('/webhooks', jsonBody, async (ctx) => {
    const accountId = ctx.state.accountId!;
    const body = validate(validators.registerWebhookBody, ctx.request.body);
    const credentials = await checkedCredentials(body);
    const url = (await checkUrl(body.url).catch(countAs('url_not_allowed'))).href;
    const existing = await findWebhookByUrl(sql, accountId, url);
    if (!existing && (await countWebhooks(sql, accountId)) >= MAX_WEBHOOKS_PER_ACCOUNT) {
      metrics.registrations.inc({ outcome: 'limit_exceeded' });
      throw apiErrors.webhookLimitExceeded(MAX_WEBHOOKS_PER_ACCOUNT);
    }
    const listIds = body.listIds ?? [];
    await assertListsOwned(accountId, listIds).catch(countAs('invalid_list_ids'));

    // The secret is kept here, sealed in PostgreSQL, for the workflow's ping to be signed with.
    const registrationId = newId('reg');
    const { webhookId } = await beginRegistration(sql, secrets, { registrationId, accountId, url }, credentials);
    const result = await workflows.runRegistration({
      registrationId,
      webhookId,
      accountId,
      url,
      events: body.events ?? DEFAULT_TOPICS,
      listIds,
      deliveryTimeoutMs,
      actor: ctx.state.actor,
    });
    metrics.registrations.inc({ outcome: result.outcome });
    switch (result.outcome) {
      case 'created': {
        const sealed = await findSealedSecret(sql, result.webhook.id);
        const secret = sealed && secrets.open(sealed, result.webhook.id);
        ctx.status = 201;
        ctx.set('Location', `/v3/webhooks/${result.webhook.id}`);
        ctx.body = { ...(await answered(accountId, result.webhook)), secret };
        return;
      }
      case 'updated':
        ctx.body = await answered(accountId, result.webhook);
        return;
      case 'unreachable':
        throw apiErrors.webhookUnreachable(result.ping.error ?? 'non_2xx', result.ping.statusCode);
      case 'limit_exceeded':
        throw apiErrors.webhookLimitExceeded(MAX_WEBHOOKS_PER_ACCOUNT);
      case 'invalid_list_ids':
        throw apiErrors.invalidListIds(result.invalidListIds);
    }
  });

  router.get('/webhooks', async (ctx) => {
    ctx.body = { data: await listWebhooks(sql, ctx.state.accountId!) };
  });

  router.get('/webhooks/:id', async (ctx) => {
    ctx.body = await ownWebhook(ctx);
  });

  router.patch('/webhooks/:id', jsonBody, async (ctx) => {
    const body = validate(validators.updateWebhookBody, ctx.request.body);
    const credentials = await checkedCredentials(body);
    const webhook = await ownWebhook(ctx);
    if (body.status && webhook.relay) throw apiErrors.relaySessionNotPausable();
    if (isChange(credentials) && webhook.relay) throw apiErrors.relaySessionWithoutCredentials();
    if (body.listIds) await assertListsOwned(ctx.state.accountId!, body.listIds);
    const actor = ctx.state.actor!;
    if (body.events || body.listIds || isChange(credentials)) {
      await updateWebhookSettings(sql, secrets, webhook.id, { events: body.events, listIds: body.listIds, credentials }, actor);
    }
    // The count lives in the per-webhook workflow: reactivating there really resets it.
    if (body.status) await workflows.setWebhookStatus(webhook.id, body.status, actor);
    ctx.body = await ownWebhook(ctx);
  });

  router.delete('/webhooks/:id', async (ctx) => {
    const webhook = await ownWebhook(ctx);
    const actor = ctx.state.actor!;
    if (!(await workflows.deleteThroughLifecycle(webhook.id, actor))) await deleteWebhookRow(sql, webhook.id, actor);
    ctx.status = 204;
  });

  router.post('/webhooks/:id/pings', jsonBody, async (ctx) => {
    // No body at all, or an empty object.
    if (ctx.request.body !== undefined) validate(validators.emptyBody, ctx.request.body);
    const webhook = await ownWebhook(ctx);
    ctx.body = await workflows.runPing(ctx.state.accountId!, webhook.id, ctx.state.actor!);
  });

  // The last 24 hours of event deliveries, hour by hour, for the dashboard's bars.
  router.get('/webhooks/:id/health', async (ctx) => {
    const webhook = await ownWebhook(ctx);
    const health = await findWebhookHealthHours(sql, webhook.id);
    if (!health) throw apiErrors.webhookNotFound();
    ctx.body = health;
  });

  router.get('/webhooks/:id/deliveries', async (ctx) => {
    const { limit, ...filters } = validate(validators.deliveriesQuery, { ...ctx.query }, '/query');
    const webhook = await ownWebhook(ctx);
    ctx.body = await pageOf(limit, (rows) => listDeliveries(sql, webhook.id, { ...filters, limit: rows }));
  });

  // Every event delivery planned for the webhook, oldest first, for a receiver to catch up by pulling.
  router.get('/webhooks/:id/events', async (ctx) => {
    const query = validate(validators.eventFeedQuery, { ...ctx.query }, '/query');
    const webhook = await ownWebhook(ctx);
    const after = query.after === undefined ? null : await feedAfter(webhook.id, query.after);
    const request = { webhookId: webhook.id, after, limit: Number(query.limit ?? FEED_PAGE_SIZE), waitMs: Number(query.wait ?? 0) * 1000 };
    ctx.body = await feedPage(sql, feedWaits, request, ctx.res);
  });

  // One entry, with what was sent and what came back: the receiver's text, as text.
  router.get('/webhooks/:id/deliveries/:deliveryId', async (ctx) => {
    const webhook = await ownWebhook(ctx);
    const detail = DELIVERY_ID.test(ctx.params.deliveryId) ? await findDeliveryDetail(sql, webhook.id, ctx.params.deliveryId) : null;
    if (!detail) throw apiErrors.deliveryNotFound();
    ctx.body = detail;
  });

  // The same event body again, now, signed with the current secret: an owner's manual tool.
  router.post('/webhooks/:id/deliveries/:deliveryId/redeliveries', jsonBody, async (ctx) => {
    if (ctx.request.body !== undefined) validate(validators.emptyBody, ctx.request.body);
    const webhook = await ownWebhook(ctx);
    const repeated = DELIVERY_ID.test(ctx.params.deliveryId) ? await findDelivery(sql, webhook.id, ctx.params.deliveryId) : null;
    if (!repeated) throw apiErrors.deliveryNotFound();
    if (!isRedeliverable(repeated.kind)) throw apiErrors.notRedeliverable();
    const deliveryId = newId('dlv');
    const result = await workflows.runRedelivery(ctx.state.accountId!, {
      webhookId: webhook.id,
      deliveryId,
      redeliveryOf: repeated.id,
      topic: repeated.event as Topic,
      // An event's log entry always holds its write's list, cursor and time.
      event: { listId: repeated.listId!, cursor: repeated.cursor!, at: repeated.at! },
      actor: ctx.state.actor,
    });
    ctx.body = { deliveryId, ...result };
  });

  // One delivery of the topic the owner chose, marked SVC-Test: a receiver's developer's tool.
  router.post('/webhooks/:id/test-events', jsonBody, async (ctx) => {
    const body = validate(validators.testEventBody, ctx.request.body);
    const webhook = await ownWebhook(ctx);
    const accountId = ctx.state.accountId!;
    if (body.listId !== undefined && !(await isListOfAccount(sql, accountId, body.listId))) {
      throw apiErrors.testEventListNotAllowed(body.listId);
    }
    const deliveryId = newId('dlv');
    const result = await workflows.runTestEvent(accountId, {
      webhookId: webhook.id,
      deliveryId,
      topic: body.event,
      // Cursor 0: no write has it, cursors start at 1.
      event: { listId: body.listId ?? TEST_EVENT_LIST_ID, cursor: 0, at: new Date().toISOString() },
      actor: ctx.state.actor,
    });
    ctx.body = { deliveryId, ...result };
  });

  // Never through Temporal: the secret stays in PostgreSQL, sealed, and in this one answer.
  router.post('/webhooks/:id/secret', jsonBody, async (ctx) => {
    const body = ctx.request.body === undefined ? {} : validate(validators.rotateSecretBody, ctx.request.body);
    const webhook = await ownWebhook(ctx);
    const secret = body.secret ?? newSigningSecret();
    await replaceWebhookSecret(sql, webhook.id, secrets.seal(secret, webhook.id), ctx.state.actor!);
    ctx.body = { secret };
  });

  return router;
}

/** Items of a page of the event feed without `limit`. */
const FEED_PAGE_SIZE = 100;

/** The body's listId of a test event sent without one. */
const TEST_EVENT_LIST_ID = 'test';

/** The context of a route whose path names things by id. */
export type PathContext = ApiContext & { params: Record<string, string> };

/** The caller's webhook named in the path; another account's is as unknown as a missing one. */
export async function findOwnWebhook(sql: Sql, ctx: PathContext): Promise<Webhook> {
  // Something that cannot be an id is as unknown as a missing one; it never reaches
  // PostgreSQL, which refuses some strings outright (a NUL character: a 500 otherwise).
  const id = ctx.params.id;
  const webhook = WEBHOOK_ID.test(id) ? await findWebhook(sql, ctx.state.accountId!, id) : null;
  if (!webhook) throw apiErrors.webhookNotFound();
  return webhook;
}

const WEBHOOK_ID = new RegExp(idPattern('wh'));
const DELIVERY_ID = new RegExp(idPattern('dlv'));

/** Counts a registration refused before its workflow (and not for want of a backing service), then rethrows. */
function countAs(outcome: 'url_not_allowed' | 'invalid_list_ids') {
  return (error: unknown): never => {
    if (error instanceof ApiError || error instanceof UrlNotAllowedError) metrics.registrations.inc({ outcome });
    throw error;
  };
}
