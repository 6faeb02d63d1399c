// The TypeScript receiver library's catch-up against the real service's feed: following it as
// writes are recorded, a handler that fails (the event comes again), and the feed's refusals.
// test/receivers/end-to-end.test.ts has the three example receivers catch up after a restart.
import { describe, expect, it } from 'vitest';
import { FeedError, MemorySeenStore, WebhookReceiver, type HandledVerdict, type Via } from '../../receivers/typescript/index';
import { useStackWithReceiver } from '../support/stack';
import { waitFor } from '../support/wait';

const suite = useStackWithReceiver();

/** A webhook pushing to the stack's own receiver, and a receiver library that only pulls its feed, its handler noting each event in `handled`. */
async function pullingReceiver(handler?: (verdict: HandledVerdict, via: Via) => void) {
  const { stack, receiver } = suite;
  const { owner, webhookId, listId } = await stack.setUpListWebhook(receiver.urlFor('/pulled'));
  const handled: { cursor: number; via: Via; outcome: string }[] = [];
  const store = new MemorySeenStore();
  const library = new WebhookReceiver({
    secrets: [],
    webhookId,
    store,
    handler: (verdict, via) => {
      handler?.(verdict, via);
      handled.push({ cursor: verdict.delivery.cursor, via, outcome: verdict.outcome });
    },
    feed: { baseUrl: stack.service.url, token: owner.token },
  });
  return { library, store, handled, webhookId, listId, token: owner.token };
}

describe('catchUp', () => {
  it('follows the feed: each write recorded reaches the handler once, until the signal aborts', async () => {
    const { library, handled, listId } = await pullingReceiver();
    const controller = new AbortController();
    const following = library.catchUp({ follow: true, signal: controller.signal });
    await suite.stack.reportWrite(listId, 'w1');
    await waitFor(async () => handled.length === 1 || undefined, { what: `the first write: ${JSON.stringify(handled)}` });
    await suite.stack.reportWrite(listId, 'w2');
    await waitFor(async () => handled.length === 2 || undefined, { what: `the second write: ${JSON.stringify(handled)}` });
    controller.abort(new Error('stopped following'));
    await expect(following).rejects.toThrow('stopped following');
    expect(handled).toEqual([
      { cursor: 1, via: 'pull', outcome: 'new' },
      { cursor: 2, via: 'pull', outcome: 'new' },
    ]);
  });

  it('stops at an event its handler fails on, which comes again on the next catch-up', async () => {
    let failing = true;
    const { library, handled, listId, webhookId, token } = await pullingReceiver((verdict) => {
      if (failing && verdict.delivery.cursor === 2) throw new Error('the queue is down');
    });
    for (const writeId of ['w1', 'w2', 'w3']) await suite.stack.reportWrite(listId, writeId);
    // A write's item is readable once every transaction older than it has ended.
    await waitFor(
      async () => (await suite.stack.request('GET', `/v3/webhooks/${webhookId}/events`, { token })).body.data.length === 3 || undefined,
    );
    await expect(library.catchUp()).rejects.toThrow('the queue is down');
    expect(handled.map(({ cursor }) => cursor)).toEqual([1]);
    failing = false;
    expect(await library.catchUp()).toBe(2);
    expect(handled.map(({ cursor }) => cursor)).toEqual([1, 2, 3]);
  });

  it("fails with the feed's error code for a stored position the feed refuses", async () => {
    const { library, store, webhookId } = await pullingReceiver();
    store.savePosition(webhookId, 'not-a-position');
    const refused = await library.catchUp().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(FeedError);
    expect(refused).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', oldestPosition: null });
  });

  it('needs a webhook id and a handler beside a feed', () => {
    expect(() => new WebhookReceiver({ secrets: [], feed: { baseUrl: suite.stack.service.url, token: 'tok' } })).toThrow(
      'a receiver with a feed needs webhookId and handler',
    );
  });
});
