// The webhook receiver library for TypeScript (package export `svc-webhooks/receiver`), the same
// design as receivers/python and receivers/go: docs/receiving.md says how to use it and why.
// Verifies a delivery against one or several secrets, answers pings without one, and tells a
// new delivery from a duplicate; for list.changed it reports the cursors missed (a gap) and the
// ones that come after a later one (late), from the seen-state of a SeenStore. Every verdict
// carries the delivery's trace context, from its traceparent header, when it has one, and
// withDeliverySpan continues that trace when @opentelemetry/api is installed. With a handler and
// the service's feed, it hands each event to the handler once, whether it came pushed or pulled,
// catches up from the position it stored, and pulls the events a cursor gap says were missed.
import { createRequire } from 'node:module';
import type * as OpenTelemetry from '@opentelemetry/api';
import { verifySignature } from '../../src/delivery/signing';
import { parseTraceparent as parseSpanContext } from '../../workflows/traceparent';

/** The topic that fires on every write of a list, so that its cursors come one by one. */
export const LIST_CHANGED = 'list.changed';
/** The largest cursor the library accepts: every integer up to it is exact in all three languages. */
export const MAX_CURSOR = Number.MAX_SAFE_INTEGER;

/** A verified event delivery: the signed body's fields, and the headers that name it. */
export interface Delivery {
  /** SVC-Webhook. */
  webhookId: string;
  /** SVC-Delivery: the id in the delivery log, new for every redelivery; null when absent. */
  deliveryId: string | null;
  event: string;
  listId: string;
  cursor: number;
  at: string;
}

/** The cursors of one list that no list.changed delivery brought, from `first` to `last` inclusive. */
export interface Gap {
  first: number;
  last: number;
}

/**
 * The trace a delivery belongs to, from its traceparent header (W3C Trace Context). The service
 * sends the header only when its operator turns it on. It is outside the signature, as every
 * header is: take it as a hint for tracing, never as proof of anything.
 */
export interface TraceContext {
  /** 32 lower-case hex digits: the trace of the write the delivery tells of. */
  traceId: string;
  /** 16 lower-case hex digits: the span of the service's POST of this delivery. */
  parentId: string;
  /** The sampled flag: set when the service records the trace; a receiver's sampler follows it. */
  sampled: boolean;
}

/**
 * What a request is. `trace`, on every verdict, pings and test events included, is the
 * delivery's trace context from its traceparent header; null when the header is absent or invalid.
 */
export type Verdict =
  /** A registration or manual ping: answer 2xx, and act on nothing in it. */
  | { outcome: 'ping'; trace: TraceContext | null }
  /** Not seen before. For list.changed, `gap` names the cursors missed before it, if any: refetch the list. */
  | { outcome: 'new'; delivery: Delivery; gap: Gap | null; trace: TraceContext | null }
  /** list.changed below the highest cursor seen, not seen before: an older write, after a newer one. */
  | { outcome: 'late'; delivery: Delivery; trace: TraceContext | null }
  /** Seen before (same webhook, list, event and cursor): a redelivery or a replayed request. */
  | { outcome: 'duplicate'; delivery: Delivery; trace: TraceContext | null }
  /** A test event its owner sent (SVC-Test: 1, cursor 0): verified, but no list changed. Marks nothing seen. */
  | { outcome: 'test'; delivery: Delivery; trace: TraceContext | null };

export type Outcome = Verdict['outcome'];

export type DeliveryErrorCode = 'missing_header' | 'invalid_signature' | 'invalid_body' | 'other_webhook';

/** A request that is not a delivery this receiver accepts; `code` says why. Nothing is recorded for it. */
export class DeliveryError extends Error {
  override name = 'DeliveryError';
  constructor(
    readonly code: DeliveryErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** What makes a delivery the same delivery: a redelivery repeats all four. */
export interface SeenKey {
  webhookId: string;
  listId: string;
  event: string;
  cursor: number;
}

/**
 * The receiver's memory. Each method must be atomic (of two concurrent markSeen calls with one
 * key, one gets true), and the state must outlive the process for the receiver to see gaps and
 * duplicates across restarts: MemorySeenStore keeps it in memory only.
 */
export interface SeenStore {
  /** Records the key; true when it was not recorded before. */
  markSeen(key: SeenKey): boolean | Promise<boolean>;
  /** Removes the key, so that the same delivery counts as new when it comes again. */
  forget(key: SeenKey): void | Promise<void>;
  /** Raises the highest list.changed cursor of (webhook, list) to at least `cursor`; returns the highest before, null for none. */
  advanceCursor(webhookId: string, listId: string, cursor: number): number | null | Promise<number | null>;
  /** The webhook's feed position the catch-up stored last; null for none (it then reads from the oldest item kept). */
  position(webhookId: string): string | null | Promise<string | null>;
  /** Stores the webhook's feed position; null forgets it. */
  savePosition(webhookId: string, position: string | null): void | Promise<void>;
}

/** The default SeenStore: in this process's memory, for as long as it runs. Keeps every key it is given. */
export class MemorySeenStore implements SeenStore {
  private readonly seen = new Set<string>();
  private readonly highest = new Map<string, number>();
  private readonly positions = new Map<string, string>();

  markSeen(key: SeenKey): boolean {
    const id = seenId(key);
    if (this.seen.has(id)) return false;
    this.seen.add(id);
    return true;
  }

  forget(key: SeenKey): void {
    this.seen.delete(seenId(key));
  }

  advanceCursor(webhookId: string, listId: string, cursor: number): number | null {
    const id = JSON.stringify([webhookId, listId]);
    const previous = this.highest.get(id) ?? null;
    if (previous === null || cursor > previous) this.highest.set(id, cursor);
    return previous;
  }

  position(webhookId: string): string | null {
    return this.positions.get(webhookId) ?? null;
  }

  savePosition(webhookId: string, position: string | null): void {
    if (position === null) this.positions.delete(webhookId);
    else this.positions.set(webhookId, position);
  }
}

function seenId(key: SeenKey): string {
  return JSON.stringify([key.webhookId, key.listId, key.event, key.cursor]);
}

/**
 * True when `header` is `sha256=` and the lowercase hex HMAC-SHA256 of `body` under one of
 * `secrets`. Each comparison runs in constant time, and every secret is tried, so the time
 * taken does not tell which one matched.
 */
export function verify(body: string | Uint8Array, header: string | null | undefined, secrets: readonly string[]): boolean {
  const raw = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return secrets.map((secret) => verifySignature(raw, header ?? undefined, secret)).includes(true);
}

/**
 * The trace context a traceparent header names, or null when it is absent or invalid. Follows
 * W3C Trace Context level 1: version 00 is exactly 55 characters; a later version may have more
 * fields after a dash, which are ignored; version ff, an all-zero trace-id or parent-id, and
 * upper-case hex are invalid. The service reads the header by the same rules (workflows/traceparent.ts).
 */
export function parseTraceparent(header: string | null | undefined): TraceContext | null {
  const context = parseSpanContext(header ?? undefined);
  if (context === null) return null;
  return { traceId: context.traceId, parentId: context.spanId, sampled: (context.traceFlags & 0x01) === 0x01 };
}

/** Request headers: Node's `req.headers`, a plain object, or anything with `get(name)` (the Fetch API's Headers). */
export type RequestHeaders = Record<string, string | string[] | undefined> | { get(name: string): string | null };

/** One item of the feed, `GET /v3/webhooks/{id}/events`: an event delivery as the push carries it, and where it is in the feed. */
export interface FeedItem {
  position: string;
  /** The SVC-Delivery id its push carries. */
  deliveryId: string;
  event: string;
  listId: string;
  cursor: number;
  at: string;
}

/** How an event reached the handler: pushed by the service, or pulled from its feed. */
export type Via = 'push' | 'pull';

/** A verdict the handler is given: an event seen for the first time. */
export type HandledVerdict = Extract<Verdict, { outcome: 'new' | 'late' }>;

/**
 * The receiver's own handling of an event, for pushed and pulled ones alike. When it throws or
 * rejects, the event is forgotten (it counts as new when it comes again) and the error goes on.
 */
export type Handler = (verdict: HandledVerdict, via: Via) => void | Promise<void>;

/** Where the catch-up pulls from: the service's API, with a token that has the scope `deliveries:read`. */
export interface FeedOptions {
  /** The API's base URL, e.g. `https://webhooks.example.com`. */
  baseUrl: string;
  token: string;
  /** Items per page, 1 to 500; default 100. */
  limit?: number;
  /** Told when pulling a gap in the background fails (the feed, the store or the handler); default console.error. */
  onError?: (error: unknown) => void;
}

/** The feed answered other than 200: `code` is the API's error code (`POSITION_EXPIRED`: the stored position is older than anything kept). */
export class FeedError extends Error {
  override name = 'FeedError';
  constructor(
    readonly status: number,
    readonly code: string | null,
    message: string,
    /** With POSITION_EXPIRED: the oldest position kept. */
    readonly oldestPosition: string | null = null,
  ) {
    super(message);
  }
}

export interface CatchUpOptions {
  /** Keeps pulling, each request held up to 30 s while nothing is new, until `signal` aborts. */
  follow?: boolean;
  signal?: AbortSignal;
}

/** The feed's page size unless FeedOptions.limit says otherwise. */
const DEFAULT_PAGE = 100;
/** The longest the feed holds a request (its `wait`), in seconds. */
const FOLLOW_WAIT_SECONDS = 30;
/** How long a gap is pulled for at most, and how long each of its requests may be held, in seconds. */
const GAP_FILL_SECONDS = 30;
const GAP_POLL_SECONDS = 1;

export interface ReceiverOptions {
  /** The webhook's signing secret, or several while one replaces another (docs/receiving.md, "Rotating the secret"). */
  secrets: string | readonly string[];
  /** Where what was seen is kept; default a new MemorySeenStore. */
  store?: SeenStore;
  /** The only SVC-Webhook this receiver accepts; without it, the header is trusted as the webhook's id. Needed with `feed`. */
  webhookId?: string;
  /** Given every event seen for the first time, pushed (by receive) or pulled (by catchUp); needed with `feed`. */
  handler?: Handler;
  /** The service's feed, for catchUp and for pulling what a cursor gap says was missed. */
  feed?: FeedOptions;
}

export class WebhookReceiver {
  private readonly secrets: readonly string[];
  private readonly store: SeenStore;
  private readonly webhookId: string | undefined;
  private readonly handler: Handler | undefined;
  private readonly feed: FeedOptions | undefined;

  constructor(options: ReceiverOptions) {
    this.secrets = typeof options.secrets === 'string' ? [options.secrets] : [...options.secrets];
    this.store = options.store ?? new MemorySeenStore();
    this.webhookId = options.webhookId;
    this.handler = options.handler;
    this.feed = options.feed;
    if (this.feed && (this.webhookId === undefined || this.handler === undefined)) {
      throw new TypeError('a receiver with a feed needs webhookId and handler');
    }
  }

  /**
   * Judges one request from its headers and its raw body, exactly as received. Throws a
   * DeliveryError for a request it refuses (never for its traceparent: an invalid one is no
   * trace context); marks an accepted delivery as seen. With a handler, hands it a new or late
   * delivery before resolving; with a feed too, a new delivery after a gap starts pulling the
   * events missed, in the background, which reach the handler as late.
   */
  async receive(headers: RequestHeaders, body: string | Uint8Array): Promise<Verdict> {
    const trace = parseTraceparent(header(headers, 'traceparent'));
    const event = required(headers, 'svc-event');
    if (event === 'ping') return { outcome: 'ping', trace };
    const signature = required(headers, 'svc-signature');
    const webhookId = required(headers, 'svc-webhook');
    if (this.webhookId !== undefined && webhookId !== this.webhookId) {
      throw new DeliveryError('other_webhook', `SVC-Webhook is ${webhookId}, not ${this.webhookId}`);
    }
    if (!verify(body, signature, this.secrets)) {
      throw new DeliveryError('invalid_signature', 'SVC-Signature does not match the body under any of the secrets');
    }
    const test = header(headers, 'svc-test') === '1';
    const delivery = parseDelivery(body, event, webhookId, header(headers, 'svc-delivery') ?? null, test ? TEST_CURSOR : 1);
    if (test) return { outcome: 'test', delivery, trace };
    const verdict = await this.judge(delivery, trace, 'push');
    if (verdict.outcome === 'new' && verdict.gap !== null && this.feed) this.fillGap(delivery.listId, verdict.gap);
    return verdict;
  }

  /**
   * Judges one item of the feed as catchUp does, for a receiver that pulls the feed itself: the
   * same delivery as its push (same webhook, list, event and cursor), so whichever comes second
   * is a duplicate. Items come over the authenticated API, unsigned: they are trusted by the
   * token that fetched them, and name the receiver's webhookId, which it needs.
   */
  async receiveItem(item: FeedItem): Promise<Verdict> {
    if (this.webhookId === undefined) throw new TypeError('receiveItem needs the receiver to have a webhookId');
    const { deliveryId, event, listId, cursor, at } = item;
    return this.judge({ webhookId: this.webhookId, deliveryId, event, listId, cursor, at }, null, 'pull');
  }

  /**
   * Pulls the feed from the position the store keeps, page after page, judges each item
   * (receiveItem) and stores the position after each page; resolves, with the number of events
   * handed to the handler, at the first page that is not full. With `follow`, goes on until
   * `signal` aborts (then rejects with its reason). Safe beside receive and another catchUp:
   * the store tells every delivery once, and an item pulled twice is a duplicate.
   */
  async catchUp(options: CatchUpOptions = {}): Promise<number> {
    const limit = this.feedOf('catchUp').limit ?? DEFAULT_PAGE;
    return this.pull((page) => (options.follow ? FOLLOW_WAIT_SECONDS : page.data.length < limit ? null : 0), options.signal);
  }

  /**
   * Pulls, in the background, until the feed has brought every cursor of the gap or
   * GAP_FILL_SECONDS have passed (the next catchUp then fills it): a write's item becomes
   * readable a moment after its push may have come, and the writes of a list made while the
   * account was not a member of it are in no feed.
   */
  private fillGap(listId: string, gap: Gap): void {
    const feed = this.feedOf('fillGap');
    const limit = feed.limit ?? DEFAULT_PAGE;
    const covered = new Set<number>();
    const deadline = Date.now() + GAP_FILL_SECONDS * 1000;
    const inGap = (item: FeedItem) =>
      item.event === LIST_CHANGED && item.listId === listId && item.cursor >= gap.first && item.cursor <= gap.last;
    this.pull((page) => {
      for (const item of page.data.filter(inGap)) covered.add(item.cursor);
      if (covered.size === gap.last - gap.first + 1 || Date.now() >= deadline) return null;
      return page.data.length < limit ? GAP_POLL_SECONDS : 0;
    }).catch(feed.onError ?? ((error: unknown) => console.error('svc-webhooks/receiver: filling a gap failed', error)));
  }

  /**
   * Pulls pages from the stored position, judging each item and storing the position after
   * each page, while `then` (given each page) answers the seconds the next request may be held;
   * resolves with the number of events handed to the handler when it answers null.
   */
  private async pull(then: (page: FeedPage) => number | null, signal?: AbortSignal): Promise<number> {
    const feed = this.feedOf('pull');
    const webhookId = this.webhookId!;
    let handed = 0;
    for (let wait: number | null = 0; wait !== null;) {
      signal?.throwIfAborted();
      const after = await this.store.position(webhookId);
      const page = await fetchPage(feed, webhookId, after, wait, signal);
      for (const item of page.data) {
        const verdict = await this.receiveItem(item);
        if (verdict.outcome !== 'duplicate') handed += 1;
      }
      if (page.next !== null && page.next !== after) await this.store.savePosition(webhookId, page.next);
      wait = then(page);
    }
    return handed;
  }

  private feedOf(caller: string): FeedOptions {
    if (!this.feed) throw new TypeError(`${caller} needs the receiver to have a feed`);
    return this.feed;
  }

  /** Unmarks a delivery you could not accept (answer it 5xx): when it comes again, by a redelivery, it is new. */
  async forget(delivery: Delivery): Promise<void> {
    await this.store.forget(keyOf(delivery));
  }

  /** Marks a delivery seen, tells new from late and duplicate, and hands a first sight to the handler. */
  private async judge(delivery: Delivery, trace: TraceContext | null, via: Via): Promise<Verdict> {
    if (!(await this.store.markSeen(keyOf(delivery)))) return { outcome: 'duplicate', delivery, trace };
    let verdict: HandledVerdict;
    if (delivery.event !== LIST_CHANGED) verdict = { outcome: 'new', delivery, gap: null, trace };
    else {
      const previous = await this.store.advanceCursor(delivery.webhookId, delivery.listId, delivery.cursor);
      if (previous !== null && delivery.cursor < previous) verdict = { outcome: 'late', delivery, trace };
      else {
        const gap = previous !== null && delivery.cursor > previous + 1 ? { first: previous + 1, last: delivery.cursor - 1 } : null;
        verdict = { outcome: 'new', delivery, gap, trace };
      }
    }
    if (this.handler) {
      try {
        await this.handler(verdict, via);
      } catch (error) {
        await this.forget(delivery);
        throw error;
      }
    }
    return verdict;
  }
}

interface FeedPage {
  data: FeedItem[];
  next: string | null;
}

/** One page of the feed after `after` (from the oldest kept when null), held up to `wait` seconds while it is empty. */
async function fetchPage(
  feed: FeedOptions,
  webhookId: string,
  after: string | null,
  wait: number,
  signal: AbortSignal | undefined,
): Promise<FeedPage> {
  const url = new URL(
    `v3/webhooks/${encodeURIComponent(webhookId)}/events`,
    feed.baseUrl.endsWith('/') ? feed.baseUrl : `${feed.baseUrl}/`,
  );
  if (after !== null) url.searchParams.set('after', after);
  url.searchParams.set('limit', String(feed.limit ?? DEFAULT_PAGE));
  if (wait > 0) url.searchParams.set('wait', String(wait));
  const response = await fetch(url, { headers: { authorization: `Bearer ${feed.token}` }, signal });
  const body = (await response.json().catch(() => null)) as FeedPage & {
    error?: { code?: string; message?: string; oldestPosition?: string };
  };
  if (response.status !== 200) {
    const error = body?.error;
    throw new FeedError(
      response.status,
      error?.code ?? null,
      `the feed answered ${response.status}${error?.message ? `: ${error.message}` : ''}`,
      error?.oldestPosition ?? null,
    );
  }
  return body;
}

function keyOf(delivery: Delivery): SeenKey {
  return { webhookId: delivery.webhookId, listId: delivery.listId, event: delivery.event, cursor: delivery.cursor };
}

function header(headers: RequestHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const found = Object.keys(record).find((key) => key.toLowerCase() === name);
  const value = found === undefined ? undefined : record[found];
  return typeof value === 'string' ? value : undefined;
}

/** A header that must be there and not empty. */
function required(headers: RequestHeaders, name: string): string {
  const value = header(headers, name);
  if (!value) throw new DeliveryError('missing_header', `the request has no ${name} header`);
  return value;
}

/** A test event's cursor: no write has it. */
const TEST_CURSOR = 0;

function parseDelivery(
  body: string | Uint8Array,
  headerEvent: string,
  webhookId: string,
  deliveryId: string | null,
  leastCursor: number,
): Delivery {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    throw new DeliveryError('invalid_body', 'the body is not JSON in UTF-8');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new DeliveryError('invalid_body', 'the body is not a JSON object');
  }
  const { event, listId, cursor, at } = parsed as Record<string, unknown>;
  if (typeof event !== 'string' || event === '') throw new DeliveryError('invalid_body', '`event` is not a non-empty string');
  if (typeof listId !== 'string' || listId === '') throw new DeliveryError('invalid_body', '`listId` is not a non-empty string');
  if (typeof cursor !== 'number' || !Number.isInteger(cursor) || cursor < leastCursor || cursor > MAX_CURSOR) {
    throw new DeliveryError('invalid_body', `\`cursor\` is not an integer from ${leastCursor} to ${MAX_CURSOR}`);
  }
  if (typeof at !== 'string') throw new DeliveryError('invalid_body', '`at` is not a string');
  if (event !== headerEvent) throw new DeliveryError('invalid_body', `the signed body's event is ${event}, SVC-Event says ${headerEvent}`);
  return { webhookId, deliveryId, event, listId, cursor, at };
}

/** The `@opentelemetry/api` package, which withDeliverySpan uses when it can load it. */
export type OpenTelemetryApi = typeof OpenTelemetry;

export interface DeliverySpanOptions {
  /**
   * Loads `@opentelemetry/api`; by default it is required from beside this library, once. Pass
   * your own where that cannot work, as in a bundle (`() => api`, from your own import). When
   * it throws, there is no span and `handle` simply runs.
   */
  loadOpenTelemetry?: () => OpenTelemetryApi;
}

/**
 * Runs `handle`, the receiver's own handling of a delivery it has judged, inside a span that
 * continues the delivery's trace: the child of the service's POST when the verdict has a trace
 * context, else of the caller's active context (a root span when there is none). The span is
 * CONSUMER-kind, named `receive <event>` (`receive ping` for a ping), with the attributes
 * `webhook.id`, `delivery.id` and `event` that the verdict has; it is active while `handle` runs,
 * so that spans `handle` starts are its children, and it ends when `handle` has finished, with
 * an error status if it threw or rejected. Whether it is recorded is the sampler's call (the
 * default follows the traceparent's sampled flag). `@opentelemetry/api` is optional: without
 * it, or without a tracer provider registered, `handle` simply runs. Resolves to what `handle`
 * returns.
 */
export async function withDeliverySpan<T>(verdict: Verdict, handle: () => T | Promise<T>, options: DeliverySpanOptions = {}): Promise<T> {
  const api = options.loadOpenTelemetry ? loadOrNull(options.loadOpenTelemetry) : installedOpenTelemetry();
  if (api === null) return handle();
  const event = verdict.outcome === 'ping' ? 'ping' : verdict.delivery.event;
  const attributes: OpenTelemetry.Attributes = { event };
  if (verdict.outcome !== 'ping') {
    attributes['webhook.id'] = verdict.delivery.webhookId;
    if (verdict.delivery.deliveryId !== null) attributes['delivery.id'] = verdict.delivery.deliveryId;
  }
  const { trace } = verdict;
  const parent =
    trace === null
      ? api.context.active()
      : api.trace.setSpanContext(api.context.active(), {
          traceId: trace.traceId,
          spanId: trace.parentId,
          traceFlags: trace.sampled ? api.TraceFlags.SAMPLED : api.TraceFlags.NONE,
          isRemote: true,
        });
  // CONSUMER, not SERVER: the span is the handling of a message; the request's SERVER span is
  // an instrumented HTTP server's own.
  const spanOptions = { kind: api.SpanKind.CONSUMER, attributes };
  return api.trace.getTracer('svc-webhooks/receiver').startActiveSpan(`receive ${event}`, spanOptions, parent, async (span) => {
    try {
      return await handle();
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

function loadOrNull(load: () => OpenTelemetryApi): OpenTelemetryApi | null {
  try {
    return load();
  } catch {
    return null;
  }
}

/** The default loader's answer, kept so that a package that is not installed is looked for once. */
let installedApi: OpenTelemetryApi | null | undefined;

function installedOpenTelemetry(): OpenTelemetryApi | null {
  // Required on first use, never imported, so that this library loads without the package.
  if (installedApi === undefined) installedApi = loadOrNull(() => createRequire(__filename)('@opentelemetry/api') as OpenTelemetryApi);
  return installedApi;
}
