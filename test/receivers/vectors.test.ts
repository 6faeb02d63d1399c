// The TypeScript receiver library (receivers/typescript) against the shared vectors, which
// receivers/python and receivers/go pass in their own runners.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { signPayload } from '../../src/delivery/signing';
import {
  DeliveryError,
  MemorySeenStore,
  WebhookReceiver,
  parseTraceparent,
  verify,
  type FeedItem,
  type SeenKey,
  type TraceContext,
  type Verdict,
} from '../../receivers/typescript/index';

interface SignatureCase {
  name: string;
  body: string;
  secrets: string[];
  header: string | null;
  valid: boolean;
}
/** A request, or with `pulled` an item of the feed. */
interface StreamDelivery {
  headers: Record<string, string>;
  body: string;
  pulled?: FeedItem;
  forget?: boolean;
  expect: Record<string, unknown>;
}
interface StreamCase {
  name: string;
  secrets: string[];
  webhookId: string | null;
  deliveries: StreamDelivery[];
}
interface TraceContextCase {
  name: string;
  header: string | null;
  expect: TraceContext | null;
}

// Printed afresh by the generator, with secrets of this run's own.
const vectors = JSON.parse(
  execFileSync('python3', [fileURLToPath(new URL('../../receivers/vectors/generate.py', import.meta.url))], { encoding: 'utf8' }),
) as {
  signatures: SignatureCase[];
  streams: StreamCase[];
  traceContexts: TraceContextCase[];
};

/** A verdict in the vectors' terms: the outcome, the gap of a new one, the trace context if any, or the error's code. */
async function judge(receiver: WebhookReceiver, delivery: StreamDelivery): Promise<Record<string, unknown>> {
  let verdict: Verdict;
  try {
    verdict = delivery.pulled
      ? await receiver.receiveItem(delivery.pulled)
      : await receiver.receive(delivery.headers, Buffer.from(delivery.body, 'utf8'));
  } catch (error) {
    if (error instanceof DeliveryError) return { error: error.code };
    throw error;
  }
  if (delivery.forget && verdict.outcome !== 'ping') await receiver.forget(verdict.delivery);
  return {
    outcome: verdict.outcome,
    ...(verdict.outcome === 'new' && { gap: verdict.gap }),
    ...(verdict.trace !== null && { trace: verdict.trace }),
  };
}

describe('signature vectors', () => {
  it.each(vectors.signatures)('$name', (vector) => {
    expect(verify(vector.body, vector.header, vector.secrets)).toBe(vector.valid);
    expect(verify(Buffer.from(vector.body, 'utf8'), vector.header, vector.secrets)).toBe(vector.valid);
  });
});

describe('delivery stream vectors', () => {
  it.each(vectors.streams)('$name', async (stream) => {
    const receiver = new WebhookReceiver({ secrets: stream.secrets, webhookId: stream.webhookId ?? undefined });
    const verdicts = [];
    for (const delivery of stream.deliveries) verdicts.push(await judge(receiver, delivery));
    expect(verdicts).toEqual(stream.deliveries.map((delivery) => delivery.expect));
  });

  it('cover every outcome and every error', () => {
    const expected = vectors.streams.flatMap((stream) => stream.deliveries.map((delivery) => delivery.expect));
    expect(new Set(expected.map((expect) => expect.outcome ?? expect.error))).toEqual(
      new Set(['ping', 'new', 'late', 'duplicate', 'test', 'missing_header', 'invalid_signature', 'invalid_body', 'other_webhook']),
    );
    expect(expected.some((expect) => expect.gap)).toBe(true);
  });
});

describe('trace context vectors', () => {
  it.each(vectors.traceContexts)('$name', async (vector) => {
    expect(parseTraceparent(vector.header)).toEqual(vector.expect);
    // A ping needs no secret: its headers alone make a verdict.
    const ping = { 'svc-event': 'ping', ...(vector.header !== null && { traceparent: vector.header }) };
    expect((await new WebhookReceiver({ secrets: [] }).receive(ping, '')).trace).toEqual(vector.expect);
  });
});

describe('WebhookReceiver', () => {
  const [stream] = vectors.streams;
  const [first, second] = stream.deliveries as [StreamDelivery, StreamDelivery];

  it('returns the delivery it verified, with its headers', async () => {
    const receiver = new WebhookReceiver({ secrets: stream.secrets[0] });
    const verdict = await receiver.receive(first.headers, first.body);
    expect(verdict).toEqual({
      outcome: 'new',
      gap: null,
      trace: null,
      delivery: {
        ...JSON.parse(first.body),
        webhookId: first.headers['svc-webhook'],
        deliveryId: first.headers['svc-delivery'],
      },
    });
  });

  it('reads headers from the Fetch API, and from a plain object in any case', async () => {
    const receiver = new WebhookReceiver({ secrets: stream.secrets });
    expect((await receiver.receive(new Headers(first.headers), first.body)).outcome).toBe('new');
    const shouted = Object.fromEntries(Object.entries(second.headers).map(([name, value]) => [name.toUpperCase(), value]));
    expect((await receiver.receive(shouted, second.body)).outcome).toBe('new');
  });

  it('says which header is missing, and why a body is refused', async () => {
    const receiver = new WebhookReceiver({ secrets: stream.secrets });
    const withoutWebhook = Object.fromEntries(Object.entries(first.headers).filter(([name]) => name !== 'svc-webhook'));
    await expect(receiver.receive(withoutWebhook, first.body)).rejects.toThrow('the request has no svc-webhook header');
    const notDelivery = '{"event":"list.changed"}';
    const signed = { ...first.headers, 'svc-signature': signPayload(notDelivery, stream.secrets[0]) };
    await expect(receiver.receive(signed, notDelivery)).rejects.toThrow('`listId` is not a non-empty string');
  });

  it('keeps its state in the store it is given, which may answer asynchronously', async () => {
    const marked: SeenKey[] = [];
    const memory = new MemorySeenStore();
    const store = {
      markSeen: async (key: SeenKey) => (marked.push(key), memory.markSeen(key)),
      forget: async (key: SeenKey) => memory.forget(key),
      advanceCursor: async (webhookId: string, listId: string, cursor: number) => memory.advanceCursor(webhookId, listId, cursor),
      position: async (webhookId: string) => memory.position(webhookId),
      savePosition: async (webhookId: string, position: string | null) => memory.savePosition(webhookId, position),
    };
    const receiver = new WebhookReceiver({ secrets: stream.secrets, store });
    await receiver.receive(first.headers, first.body);
    expect(marked).toEqual([{ webhookId: first.headers['svc-webhook'], listId: 'groceries', event: 'list.changed', cursor: 1 }]);
    // Another receiver on the same store (another process, after a restart) knows what it saw.
    const restarted = new WebhookReceiver({ secrets: stream.secrets, store });
    expect((await restarted.receive(first.headers, first.body)).outcome).toBe('duplicate');
  });
});
