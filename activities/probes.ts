// The probes of webhooks paused by failures: `webhook/{id}` hands a pause to
// `probes/{taskQueue}/{shard}` as it begins, and that workflow's wakes send the probes due, a
// ping each, logged as `probe` and never counted. The steps are the worker's delivery
// bookkeeping (delivery-bookkeeping.ts).
import { Context } from '@temporalio/activity';
import { probeSendDelaysMs } from '../src/contract/probe-schedule';
import { findDeliveryTarget } from '../src/db/deliveries';
import { pingPayload } from '../src/delivery/message';
import { signalWithStartProbes } from '../src/temporal/probes-client';
import { pingEntry, type DeliveryBookkeeping } from './delivery-bookkeeping';
import type { ActivityDependencies } from './dependencies';

export function createProbeActivities({ sql, logger, client, probePlan }: ActivityDependencies, bookkeeping: DeliveryBookkeeping) {
  /** One probe, to the webhook as it is as the probe leaves: only while it is paused. Whether it answered with a 2xx. */
  async function probe(webhookId: string): Promise<boolean> {
    const target = await findDeliveryTarget(sql, webhookId);
    if (target?.status !== 'paused') {
      logger.info({ msg: 'probe not sent', webhookId, reason: target ? `webhook ${target.status}` : 'webhook deleted' });
      return false;
    }
    const { result } = await bookkeeping.send(target, pingEntry(webhookId, 'probe'), pingPayload(webhookId));
    return result.delivered;
  }

  return {
    /** The plan is read as a pause's probing begins: a change of PROBE_INTERVALS applies to the pauses after it. */
    async handPauseToProbes(webhookId: string, since: number, taskQueue: string): Promise<boolean> {
      if (probePlan === null) return false;
      await signalWithStartProbes(client, taskQueue, { webhookId, since, plan: probePlan });
      return true;
    },

    /**
     * Probes leaving one after another over `spreadMs`. A webhook reactivated or deleted since
     * the wake gets none; that, or a probe that fails on our side, is one not answered.
     */
    async probeWebhooks(webhookIds: string[], spreadMs = 0): Promise<boolean[]> {
      const context = Context.current();
      const delaysMs = probeSendDelaysMs(webhookIds.length, spreadMs);
      return Promise.all(
        webhookIds.map(async (webhookId, i) => {
          if (delaysMs[i] > 0) await context.sleep(delaysMs[i]);
          return probe(webhookId).catch((error: unknown) => {
            logger.warn({ msg: 'probe not sent', webhookId, error: String(error) });
            return false;
          });
        }),
      );
    },
  };
}
