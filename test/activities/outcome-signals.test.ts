import { describe, expect, it } from 'vitest';
import { createOutcomeSignals } from '../../activities/delivery-bookkeeping';
import { lifecycleStateQuery } from '../../src/contract/messages';
import type { TimedOutcome } from '../../src/contract/payloads';
import { useStackWithReceiver } from '../support/stack';

const suite = useStackWithReceiver();

/** A new account's webhook at `path` on the receiver. */
async function newWebhook(path: string) {
  const { owner, webhookId } = await suite.stack.setUpListWebhook(suite.receiver.urlFor(path));
  return { token: owner.token, id: webhookId };
}

/** Outcomes that ended a millisecond apart, in this order, a second ago. */
function endedInOrder(delivered: boolean[]): TimedOutcome[] {
  const first = Date.now() - 1000;
  return delivered.map((outcome, index) => ({ deliveryId: `dlv_${index}`, delivered: outcome, endedAt: first + index }));
}

describe('createOutcomeSignals: delivery outcomes told to webhook/{id}', () => {
  it('sends the outcomes told together as one signal, in the order they ended, and settles each once Temporal has it', async () => {
    const webhook = await newWebhook('/outcomes/one-turn');
    const signals = createOutcomeSignals(suite.stack.service.client);
    const outcomes = [...Array<boolean>(19).fill(false), true, false];

    await Promise.all(
      endedInOrder(outcomes)
        .reverse()
        .map((outcome) => signals.tell(webhook.id, [outcome])),
    );

    expect(await suite.stack.outcomeSignals(webhook.id)).toEqual([outcomes]);
    // In order: 19 failures, a success that resets them, then one failure; never paused.
    expect(await suite.stack.waitForFailureCount(webhook.token, webhook.id, 1)).toMatchObject({ status: 'active' });
    expect(await suite.stack.lifecycle(webhook.id).query(lifecycleStateQuery)).toMatchObject({
      failuresCounted: 20,
      consecutiveFailures: 1,
    });
  });

  it('holds outcomes told while a signal is on its way, and sends them together next', async () => {
    const webhook = await newWebhook('/outcomes/two-batches');
    const signals = createOutcomeSignals(suite.stack.service.client);

    const [first, ...rest] = endedInOrder([false, false, false, true, false]);
    await signals.tell(webhook.id, [first]);
    await Promise.all(rest.map((outcome) => signals.tell(webhook.id, [outcome])));

    expect(await suite.stack.outcomeSignals(webhook.id)).toEqual([[false], [false, false, true, false]]);
  });

  it('keeps the batches of different webhooks apart', async () => {
    const [first, second] = [await newWebhook('/outcomes/first'), await newWebhook('/outcomes/second')];
    const signals = createOutcomeSignals(suite.stack.service.client);

    const [failure, success, another] = endedInOrder([false, true, false]);
    await Promise.all([signals.tell(first.id, [failure]), signals.tell(second.id, [success]), signals.tell(first.id, [another])]);

    expect(await suite.stack.outcomeSignals(first.id)).toEqual([[false, false]]);
    expect(await suite.stack.outcomeSignals(second.id)).toEqual([[true]]);
  });

  it("settles a deleted webhook's outcomes without a signal: there is nothing left to count", async () => {
    const webhook = await newWebhook('/outcomes/deleted');
    expect((await suite.stack.request('DELETE', `/v3/webhooks/${webhook.id}`, { token: webhook.token })).status).toBe(204);

    await expect(createOutcomeSignals(suite.stack.service.client).tell(webhook.id, endedInOrder([false]))).resolves.toBeUndefined();
  });
});
