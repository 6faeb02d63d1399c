// Recovery: an owner's action that sends again, as redeliveries, the event deliveries a
// webhook missed in a window (those that failed or were skipped while it was paused).
import Router from '@koa/router';
import type { Middleware } from 'koa';
import {
  cancelRecoveryRow,
  findRecovery,
  findUnsettledRecovery,
  listRecoveries,
  recordRecovery,
  settleRecoveryRow,
  type RecoveryRequest,
} from '../../db/recoveries';
import type { Sql } from '../../db/sql';
import type { Logger } from '../../logger';
import { idPattern, newId } from '../../ids';
import { RECOVERIES_LISTED } from '../../limits';
import type { AuditActor, Recovery } from '../../objects';
import type { Workflows } from '../../temporal/client';
import { apiErrors, type ApiError } from '../errors';
import { ROUTER_OPTIONS, type ApiState } from '../middleware';
import { validate, validators } from '../schemas';
import { findOwnWebhook, type PathContext } from './webhooks';

export interface RecoveryRoutesDeps {
  sql: Sql;
  workflows: Workflows;
  logger: Logger;
  /** Reads the JSON body, on the routes that take one. */
  body: Middleware<ApiState>;
}

const RECOVERY_ID = new RegExp(idPattern('rcv'));

/** The public recovery routes under /v3; the caller has authenticated the account. */
export function recoveryRoutes({ sql, workflows, logger, body: jsonBody }: RecoveryRoutesDeps): Router<ApiState> {
  const router = new Router<ApiState>(ROUTER_OPTIONS);

  /** The caller's webhook's recovery named in the path. */
  async function ownRecovery(ctx: PathContext): Promise<Recovery> {
    const webhook = await findOwnWebhook(sql, ctx);
    const recovery = RECOVERY_ID.test(ctx.params.recoveryId) ? await findRecovery(sql, webhook.id, ctx.params.recoveryId) : null;
    if (!recovery) throw apiErrors.recoveryNotFound();
    return recovery;
  }

  /**
   * Records the recovery, fixing its set, and starts its workflow in the same transaction: a
   * recovery is recorded only with its workflow started, and a start that fails records
   * nothing. Null when another recovery of the webhook is unsettled.
   */
  const record = (accountId: string, request: RecoveryRequest, actor: AuditActor) =>
    sql.begin(async (tx) => {
      const recovery = await recordRecovery(tx, request, actor);
      if (recovery)
        await workflows.startRecovery(accountId, { recoveryId: recovery.id, webhookId: recovery.webhookId, total: recovery.total });
      return recovery;
    });

  /** Starts the recovery, unless another of the webhook is unsettled: RECOVERY_IN_PROGRESS. */
  async function begin(accountId: string, request: RecoveryRequest, actor: AuditActor): Promise<Recovery> {
    for (let attempt = 1; ; attempt++) {
      const recovery = await record(accountId, request, actor);
      if (recovery) return recovery;
      const unsettled = await findUnsettledRecovery(sql, request.webhookId);
      if (!unsettled) continue; // it settled in the meantime
      if (attempt > 1 || (await workflows.isRecoveryRunning(request.webhookId, unsettled.id)))
        throw apiErrors.recoveryInProgress(unsettled.id);
      // Its workflow ended without settling it (an operator terminated it): it holds the webhook no more.
      await settleRecoveryRow(sql, unsettled.id, { status: 'cancelled', stoppedReason: null });
    }
  }

  router.post('/webhooks/:id/recoveries', jsonBody, async (ctx) => {
    const { since, until } = checkWindow(validate(validators.createRecoveryBody, ctx.request.body));
    const webhook = await findOwnWebhook(sql, ctx);
    if (webhook.status === 'paused') throw apiErrors.webhookPaused();
    const recovery = await begin(ctx.state.accountId!, { id: newId('rcv'), webhookId: webhook.id, since, until }, ctx.state.actor!);
    ctx.status = 202;
    ctx.set('Location', `/v3/webhooks/${webhook.id}/recoveries/${recovery.id}`);
    ctx.body = recovery;
  });

  router.get('/webhooks/:id/recoveries', async (ctx) => {
    const webhook = await findOwnWebhook(sql, ctx);
    ctx.body = { data: await listRecoveries(sql, webhook.id, RECOVERIES_LISTED) };
  });

  router.get('/webhooks/:id/recoveries/:recoveryId', async (ctx) => {
    ctx.body = await ownRecovery(ctx);
  });

  // Cancelled in PostgreSQL, where every send is claimed: nothing more is sent from then on.
  // The signal only makes its workflow stop sooner than its next claim would; if Temporal
  // cannot take it now, the cancel stands all the same.
  router.delete('/webhooks/:id/recoveries/:recoveryId', async (ctx) => {
    const { webhookId, id } = await ownRecovery(ctx);
    const result = await cancelRecoveryRow(sql, webhookId, id, ctx.state.actor!);
    if (!result) throw apiErrors.recoveryNotFound(); // its webhook was deleted meanwhile
    if (result.cancelled) {
      await workflows.signalRecoveryCancel(webhookId, id).catch((error: unknown) => {
        logger.warn({ msg: 'recovery cancelled, its workflow not told', requestId: ctx.state.requestId, recoveryId: id, err: error });
      });
    }
    ctx.body = result.recovery;
  });

  return router;
}

/** `since` before `until` (default now), and `until` not in the future. */
function checkWindow(body: { since: string; until?: string }): { since: string; until?: string } {
  const since = Date.parse(body.since);
  const until = body.until === undefined ? Date.now() : Date.parse(body.until);
  if (Number.isNaN(since)) throw invalid('/since', 'must be a valid time');
  if (Number.isNaN(until)) throw invalid('/until', 'must be a valid time');
  if (until > Date.now()) throw invalid('/until', 'must not be in the future');
  if (since >= until) throw invalid('/since', body.until === undefined ? 'must be in the past' : 'must be before until');
  return body;
}

const invalid = (path: string, message: string): ApiError => apiErrors.validationFailed([{ path, message }]);
