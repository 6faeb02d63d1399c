import { continueAsNew, getExternalWorkflowHandle, sleep } from '@temporalio/workflow';
import { probesEndedSignal } from '../src/contract/messages';
import type { ProbeInput, ProbesEnded } from '../src/contract/payloads';
import { PROBES_PER_RUN, probeDueAt } from '../src/contract/rules';
import { lifecycleWorkflowId } from '../src/contract/workflows';
import { oneAttempt } from './one-attempt';

/**
 * `probe/{webhookId}/{since}`: started by `webhook/{id}` on the bulk task queue when failures
 * pause its webhook. At each delay of PROBE_INTERVALS after the pause it sends a signed ping,
 * logged as a probe and never counted, until one is answered with a 2xx or PROBE_MAX_DAYS have
 * passed, and tells `webhook/{id}` which: that store makes the `webhook.reachable` notice. It
 * never reactivates anything. Reactivating or deleting the webhook cancels it.
 */
export async function probePausedWebhook(input: ProbeInput): Promise<void> {
  // Local: the probe runs in the workflow task its timer wakes, with no activity task and no
  // second workflow task. A retried task may send a probe again: a ping, harmless.
  const { probeWebhook } = oneAttempt(input.plan.deliveryTimeoutMs, { local: true });
  for (let sent = input.sent; ; sent++) {
    const dueAt = probeDueAt(input.plan, input.since, sent);
    if (dueAt === null) return tellLifecycle(input.webhookId, { since: input.since, outcome: 'expired' });
    if (sent - input.sent === PROBES_PER_RUN) await continueAsNew<typeof probePausedWebhook>({ ...input, sent });
    await sleep(Math.max(dueAt - Date.now(), 1));
    // A probe lost on our side (a worker gone mid-way) is one more that was not answered.
    const answered = await probeWebhook(input.webhookId).then(
      (result) => result.delivered,
      () => false,
    );
    if (answered) return tellLifecycle(input.webhookId, { since: input.since, outcome: 'reachable' });
  }
}

async function tellLifecycle(webhookId: string, ended: ProbesEnded): Promise<void> {
  // A webhook deleted meanwhile has no workflow left to tell, and nothing to be told.
  await getExternalWorkflowHandle(lifecycleWorkflowId(webhookId))
    .signal(probesEndedSignal, ended)
    .catch(() => undefined);
}
