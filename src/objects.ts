// The objects the API answers with, and the requests the modules beneath the API read too (a
// list write, the delivery log's filters), as JSON schemas (draft 2020-12, the dialect of
// OpenAPI 3.1), and their TypeScript types derived from them: each shape is defined once, here.
// The OpenAPI document, the request validation and the contract tests read the schemas; the
// routes, the database modules, the workflows' payloads, the dashboard and the tests use the types.
//
// REPLAY-SENSITIVE, where marked: the objects marked so travel inside workflow and activity
// payloads too (src/contract/payloads.ts re-exports their types), and so are kept in
// histories. Add optional properties to them only; never rename, remove or retype one.
import type { FromSchema } from 'json-schema-to-ts';
import { idPattern } from './ids';
import { HEALTH_HOURS, MAX_CHANGES_PER_WRITE } from './limits';
import { SCOPES } from './scopes';
import { CHANGE_TYPES, TOPICS } from './topics';

/** What an object schema may say of its properties besides them: which must be present, how many at least. */
interface ObjectKeywords<P> {
  required?: readonly (keyof P & string)[];
  minProperties?: number;
}

/** An object schema of exactly the properties `P` (no others), with the keywords `K` before them. */
type ClosedObject<P, K> = { readonly type: 'object'; readonly additionalProperties: false } & K & { readonly properties: P };

/** An object schema of exactly these properties (no others), after `keywords` such as which of them are required. */
export function closedObject<const P extends Record<string, object>, const K extends ObjectKeywords<P> = Record<never, never>>(
  properties: P,
  keywords?: K,
): ClosedObject<P, K> {
  return { type: 'object', additionalProperties: false, ...keywords, properties } as ClosedObject<P, K>;
}

/** A response object: exactly these properties, each always present. */
function responseObject<const P extends Record<string, object>>(properties: P) {
  const required = Object.keys(properties) as (keyof P & string)[];
  return closedObject(properties, { required });
}

const timestamp = { type: 'string', format: 'date-time' } as const;
const timestampOrNull = { type: ['string', 'null'], format: 'date-time' } as const;
const count = { type: 'integer', minimum: 0 } as const;
export const topicSchema = { type: 'string', enum: TOPICS } as const;
export const scopeSchema = { type: 'string', enum: SCOPES } as const;
export const deliveryIdSchema = { type: 'string', pattern: idPattern('dlv') } as const;
export const deliveryKindSchema = { enum: ['event', 'ping', 'redelivery', 'test', 'probe'] } as const;
/** What an attempt came to; `skipped`: its webhook was paused, and nothing was sent. */
export const deliveryOutcomeSchema = { enum: ['delivered', 'failed', 'skipped'] } as const;

/**
 * A webhook's event deliveries of the last 24 hours (the current UTC hour and the 23 before it,
 * by when each was logged) and when one was last delivered and last failed. Pings,
 * redeliveries and test events are not counted.
 */
export const webhookHealthObject = responseObject({
  delivered24h: { ...count, description: 'Event deliveries delivered in the current UTC hour and the 23 before it' },
  failed24h: { ...count, description: 'Event deliveries failed in those hours, those lost on our side (`internal`) included' },
  skipped24h: { ...count, description: 'Event deliveries skipped in those hours, the webhook being paused' },
  lastDeliveredAt: {
    ...timestampOrNull,
    description: 'When an event delivery was last delivered (its attemptedAt), however long ago; null: never',
  },
  lastFailedAt: {
    ...timestampOrNull,
    description: 'When an event delivery last failed (its attemptedAt), however long ago; null: never',
  },
});
export type WebhookHealth = FromSchema<typeof webhookHealthObject>;

/**
 * How every request to the receiver authenticates, as answered: the kind and what names it,
 * never a credential (the header values, the client secret). REPLAY-SENSITIVE, in a webhook.
 */
export const receiverAuthView = {
  anyOf: [
    closedObject(
      {
        type: { const: 'headers' },
        headerNames: { type: 'array', items: { type: 'string' }, description: 'The headers sent with every request, as given' },
      },
      { required: ['type', 'headerNames'] },
    ),
    closedObject(
      {
        type: { const: 'oauth2' },
        tokenUrl: { type: 'string' },
        clientId: { type: 'string' },
        scope: { type: ['string', 'null'] },
        audience: { type: ['string', 'null'] },
      },
      { required: ['type', 'tokenUrl', 'clientId', 'scope', 'audience'] },
    ),
    { type: 'null' },
  ],
  description:
    'What authenticates every request to the receiver (docs/api.md, "Receivers behind gateways"); null: nothing but the signature',
} as const;
export type ReceiverAuthView = FromSchema<typeof receiverAuthView>;

/** The client certificate every TLS handshake with the receiver presents, as answered: never its key. REPLAY-SENSITIVE, in a webhook. */
export const clientCertificateView = {
  anyOf: [
    responseObject({
      subject: { type: 'string', description: "The certificate's subject, e.g. CN=sender" },
      notAfter: { ...timestamp, description: 'When the certificate expires' },
      fingerprintSha256: { type: 'string', pattern: '^([0-9A-F]{2}:){31}[0-9A-F]{2}$', description: "SHA-256 of the certificate's DER" },
    }),
    { type: 'null' },
  ],
  description: 'The client certificate of mutual TLS; null: none',
} as const;
export type ClientCertificateView = FromSchema<typeof clientCertificateView>;

/** REPLAY-SENSITIVE: a registration's result carries it (as RegisteredWebhook, `relay`, `health`, `auth` and `clientCertificate` optional), and `webhook/{id}` its status and pausedReason. */
export const webhookObject = responseObject({
  id: { type: 'string', pattern: idPattern('wh') },
  url: {
    type: 'string',
    description: "The receiver; for a relay session, relay://{id}: the local address stays on the developer's machine",
  },
  events: { type: 'array', items: topicSchema },
  listIds: { type: 'array', items: { type: 'string' } },
  status: { type: 'string', enum: ['active', 'paused'] },
  pausedReason: { enum: ['auto_failures', 'manual', null] },
  consecutiveFailures: { type: 'integer', minimum: 0 },
  relay: { type: 'boolean', description: 'A relay session of `svc-webhooks listen`: never paused, not counted against the webhook limit' },
  createdAt: timestamp,
  updatedAt: timestamp,
  health: webhookHealthObject,
  auth: receiverAuthView,
  clientCertificate: clientCertificateView,
});
export type Webhook = FromSchema<typeof webhookObject>;
export type WebhookStatus = Webhook['status'];
export type PausedReason = NonNullable<Webhook['pausedReason']>;

export const createdWebhookObject = responseObject({
  ...webhookObject.properties,
  secret: { type: 'string', pattern: '^whsec_', description: 'The signing secret; shown in this response only' },
});
export type CreatedWebhook = FromSchema<typeof createdWebhookObject>;

export const webhookList = responseObject({ data: { type: 'array', items: webhookObject } });

/** One UTC hour of a webhook's event deliveries, by outcome. */
export const healthHourObject = responseObject({
  hour: { ...timestamp, description: "The hour's start (UTC)" },
  delivered: count,
  failed: count,
  skipped: count,
});
export type HealthHour = FromSchema<typeof healthHourObject>;

/** GET /v3/webhooks/{id}/health: the webhook's health, and the hours it sums. */
export const webhookHealthHours = responseObject({
  ...webhookHealthObject.properties,
  hours: {
    type: 'array',
    items: healthHourObject,
    minItems: HEALTH_HOURS,
    maxItems: HEALTH_HOURS,
    description: 'The current UTC hour and the 23 before it, oldest first; an hour without a delivery is there with zeros',
  },
});
export type WebhookHealthHours = FromSchema<typeof webhookHealthHours>;

/** Why an outbound POST (event delivery or ping) did not succeed; `internal` is our own failure, never the receiver's. REPLAY-SENSITIVE. */
const DELIVERY_ERRORS = [
  'timeout',
  'redirect',
  'non_2xx',
  'connection',
  'tls',
  'blocked_address',
  'internal',
  'relay_disconnected',
  'auth_failed',
] as const;
const deliveryErrorSchema = { enum: [...DELIVERY_ERRORS, null] } as const;
/** A log entry's error: a POST's, or `paused` for a delivery skipped while its webhook was paused. */
const loggedErrorSchema = { enum: [...DELIVERY_ERRORS, 'paused', null] } as const;

/** One POST's result: a ping's answer, and what a delivery's attempt came to. REPLAY-SENSITIVE: every delivery activity returns it. */
export const deliveryResultObject = responseObject({
  delivered: { type: 'boolean' },
  statusCode: { type: ['integer', 'null'] },
  durationMs: { type: 'integer', minimum: 0 },
  error: deliveryErrorSchema,
});
export type DeliveryResult = FromSchema<typeof deliveryResultObject>;
export type DeliveryError = NonNullable<DeliveryResult['error']>;

export const redeliveryResult = responseObject({
  deliveryId: { ...deliveryIdSchema, description: "The redelivery's own id (its SVC-Delivery header)" },
  ...deliveryResultObject.properties,
});
export type RedeliveryResult = FromSchema<typeof redeliveryResult>;

export const testEventResult = responseObject({
  deliveryId: { ...deliveryIdSchema, description: "The test event's id (its SVC-Delivery header)" },
  ...deliveryResultObject.properties,
});
export type TestEventResult = FromSchema<typeof testEventResult>;

export const relayTicket = responseObject({
  ticket: { type: 'string', pattern: '^rt_', description: 'Opens one connection: GET /v3/relay-connections/{ticket} as a WebSocket' },
  expiresAt: { ...timestamp, description: 'The ticket must be used before then' },
});

export const rotatedSecret = responseObject({
  secret: { type: 'string', pattern: '^whsec_', description: 'The new signing secret; shown in this response only' },
});

export const createdAccount = responseObject({
  id: { type: 'string', pattern: '^acc_' },
  token: { type: 'string', description: "The account's API token; shown in this response only" },
});

export const apiTokenObject = responseObject({
  id: { type: 'string', pattern: idPattern('tkn') },
  name: { type: 'string' },
  prefix: {
    type: ['string', 'null'],
    description: "The token's first 8 characters; null for a token made before tokens had names, until its next use",
  },
  createdAt: timestamp,
  lastUsedAt: { ...timestampOrNull, description: 'Moves at most once a minute; null: never used' },
  expiresAt: { ...timestampOrNull, description: 'From then on the token is refused; null: never' },
  scopes: {
    type: 'array',
    minItems: 1,
    items: scopeSchema,
    description: 'What the token may do, in the order of the six; fixed when it is made. Tokens made before scopes hold all six',
  },
});
export type ApiToken = FromSchema<typeof apiTokenObject>;

export const apiTokenList = responseObject({ data: { type: 'array', items: apiTokenObject } });

export const createdApiToken = responseObject({
  ...apiTokenObject.properties,
  token: { type: 'string', pattern: '^tok_', description: 'The token itself; shown in this response only' },
});
export type CreatedApiToken = FromSchema<typeof createdApiToken>;

export const usageDay = responseObject({
  date: { type: 'string', format: 'date', description: 'A UTC day' },
  apiRequests: { type: 'integer', minimum: 0, description: "Requests to the public API with one of the account's tokens" },
  deliveries: { type: 'integer', minimum: 0, description: "POSTs to the account's webhooks: event deliveries, pings, redeliveries" },
});
export type UsageDay = FromSchema<typeof usageDay>;

export const usage = responseObject({
  data: { type: 'array', items: usageDay, description: 'One entry per UTC day, oldest first, today last' },
});

export const listObject = responseObject({
  id: { type: 'string' },
  ownerAccountId: { type: 'string' },
  memberAccountIds: { type: 'array', items: { type: 'string' } },
  cursor: { type: 'integer', minimum: 0 },
});

/** An id the upstream service names things by: a list's, a write's, an item's, an account's. */
export const upstreamIdSchema = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:-]+$' } as const;
export const isoTimeSchema = {
  type: 'string',
  maxLength: 40,
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2})$',
} as const;

/** A write the upstream reports (POST /internal/v3/lists/{listId}/writes), as the API validates it and the database records it. */
export const listWriteBody = closedObject(
  {
    writeId: { ...upstreamIdSchema, description: 'Unique per list: a repeat with the same body is answered again, never delivered twice' },
    at: { ...isoTimeSchema, description: 'ISO 8601 time of the write; default now' },
    changes: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_CHANGES_PER_WRITE,
      items: {
        ...closedObject(
          { type: { type: 'string', enum: [...CHANGE_TYPES] }, itemId: upstreamIdSchema, accountId: upstreamIdSchema },
          { required: ['type'] },
        ),
        // Membership changes name the account that joined or left.
        if: { type: 'object', properties: { type: { enum: ['member.joined', 'member.left'] } } },
        then: { type: 'object', properties: { accountId: upstreamIdSchema }, required: ['accountId'] },
      },
    },
  },
  { required: ['writeId', 'changes'] },
);
export type ListWriteBody = FromSchema<typeof listWriteBody>;
export type ListChange = ListWriteBody['changes'][number];

/** A write published to a broker (DESIGN.md §18): the route's body with the list it is to. */
export const brokerListWrite = closedObject(
  { listId: { ...upstreamIdSchema, description: 'The list written to: the route path parameter' }, ...listWriteBody.properties },
  { required: ['listId', 'writeId', 'changes'] },
);
export type BrokerListWrite = FromSchema<typeof brokerListWrite>;

export const writeAccepted = responseObject({
  writeId: { type: 'string' },
  listId: { type: 'string' },
  cursor: { type: 'integer', minimum: 1 },
  topics: { type: 'array', items: topicSchema },
});
export type WriteAccepted = FromSchema<typeof writeAccepted>;

export const deliveryLogEntry = responseObject({
  id: deliveryIdSchema,
  event: { type: 'string' },
  listId: { type: ['string', 'null'] },
  cursor: { type: ['integer', 'null'] },
  at: timestampOrNull,
  kind: deliveryKindSchema,
  redeliveryOf: { type: ['string', 'null'], description: 'The delivery a redelivery repeats; null for the others' },
  outcome: deliveryOutcomeSchema,
  statusCode: { type: ['integer', 'null'] },
  error: loggedErrorSchema,
  durationMs: { type: 'integer', minimum: 0 },
  attemptedAt: timestamp,
  traceId: {
    type: ['string', 'null'],
    pattern: '^[0-9a-f]{32}$',
    description: 'The trace the attempt was part of (W3C trace id); null when the service traced nothing',
  },
});
export type DeliveryLogEntry = FromSchema<typeof deliveryLogEntry>;
/** What the delivery log holds: event deliveries, pings, an owner's redeliveries and test events, and the probes of a paused webhook. */
export type DeliveryKind = DeliveryLogEntry['kind'];

/** Whether an attempt may be redelivered: an event's body, not a ping's, a test event's or a probe's (send a new one). */
export function isRedeliverable(kind: DeliveryKind): boolean {
  return kind === 'event' || kind === 'redelivery';
}

/** The delivery log's filters (GET /v3/webhooks/{id}/deliveries), each optional: they combine with each other and with paging. */
export const deliveryLogFilters = closedObject({
  outcome: { type: 'string', ...deliveryOutcomeSchema, description: 'Only attempts with this outcome' },
  kind: { type: 'string', ...deliveryKindSchema, description: 'Only event deliveries, pings, redeliveries, test events or probes' },
  event: { type: 'string', enum: [...TOPICS, 'ping'], description: 'Only attempts of this topic, or pings' },
});
export type DeliveryLogFilters = FromSchema<typeof deliveryLogFilters>;

/** HTTP headers by lower-case name, in the order they were sent or received. */
const headersSchema = { type: 'object', additionalProperties: { type: 'string' } } as const;

/** What the service sent: the webhook's URL, the headers it set, and the exact body. */
export const sentRequestObject = responseObject({
  url: { type: 'string' },
  headers: { ...headersSchema, description: 'Lower-case names, as sent; never the signing secret (the signature is not the secret)' },
  body: { type: 'string', description: 'The exact body' },
});
export type SentRequest = FromSchema<typeof sentRequestObject>;

/** What the receiver answered, cut to the limits of docs/api.md. */
export const receivedResponseObject = responseObject({
  statusCode: { type: 'integer' },
  headers: { ...headersSchema, description: 'Lower-case names, in the order received, kept to 4 KiB in all' },
  body: { type: 'string', description: 'The first 4 KiB of the body, decoded as UTF-8 (invalid bytes replaced): text, never markup' },
  bodyTruncated: { type: 'boolean', description: 'Whether the body went on past what is kept (over 4 KiB, or cut off by the deadline)' },
});
export type ReceivedResponse = FromSchema<typeof receivedResponseObject>;

export const deliveryDetail = responseObject({
  ...deliveryLogEntry.properties,
  request: {
    anyOf: [sentRequestObject, { type: 'null' }],
    description: 'What was sent; null when nothing was (skipped, internal, or logged before the log kept it)',
  },
  response: {
    anyOf: [receivedResponseObject, { type: 'null' }],
    description: 'What came back; null when no response arrived (time-out before the headers, connection, TLS, blocked address, skipped)',
  },
});
export type DeliveryDetail = FromSchema<typeof deliveryDetail>;

/** The `next` of a page: pass it as `before` for the next one. */
const nextPage = { type: ['string', 'null'], description: 'Pass as `before` for the next page; null on the last' } as const;

export const deliveryPage = responseObject({
  data: { type: 'array', items: deliveryLogEntry },
  next: nextPage,
});
export type DeliveryPage = FromSchema<typeof deliveryPage>;

/** A position in a webhook's event feed: opaque, and growing along the feed. */
export const feedPositionSchema = {
  type: 'string',
  pattern: '^[0-9a-f]{40}$',
  description: "A position in this webhook's event feed (opaque; later items have greater ones)",
} as const;

/**
 * One event delivery planned for a webhook, as its feed (GET /v3/webhooks/{id}/events) shows it:
 * `event`, `listId`, `cursor` and `at` are the pushed body's, `deliveryId` the push's SVC-Delivery.
 */
export const feedItemObject = responseObject({
  position: feedPositionSchema,
  deliveryId: deliveryIdSchema,
  event: topicSchema,
  listId: { type: 'string' },
  cursor: { type: 'integer', minimum: 1 },
  at: timestamp,
});
export type FeedItem = FromSchema<typeof feedItemObject>;

export const feedPage = responseObject({
  data: { type: 'array', items: feedItemObject },
  next: {
    ...feedPositionSchema,
    type: ['string', 'null'],
    description:
      "Pass as `after` for what follows: the last item's position, or the `after` given when the page is empty (null only then, without one)",
  },
});
export type FeedPage = FromSchema<typeof feedPage>;

export const accountObject = responseObject({
  id: { type: 'string', pattern: idPattern('acc') },
  name: { type: 'string' },
  notificationEmail: { type: ['string', 'null'], description: "Where the account's notices are mailed; null: nowhere" },
  createdAt: timestamp,
});
export type Account = FromSchema<typeof accountObject>;

export const noticeTypeSchema = { enum: ['webhook.failing', 'webhook.paused', 'webhook.reachable'] } as const;

/** What `webhook/{id}` told the owner of a webhook whose receiver keeps failing. */
export const noticeObject = responseObject({
  id: { type: 'string', pattern: idPattern('ntc') },
  type: {
    type: 'string',
    ...noticeTypeSchema,
    description:
      'webhook.failing: 10 failures in a row; webhook.paused: paused after 20; webhook.reachable: paused by failures, it answered a probe with a 2xx (still paused)',
  },
  webhookId: { type: 'string', pattern: idPattern('wh') },
  url: { type: 'string', description: "The webhook's URL when the notice was made" },
  consecutiveFailures: { type: 'integer', minimum: 0, description: 'The count when the notice was made' },
  lastError: { ...deliveryErrorSchema, description: 'The error of the last failed event delivery before the notice' },
  lastStatusCode: { type: ['integer', 'null'], description: 'Its HTTP status, if a response came' },
  createdAt: timestamp,
  emailedAt: {
    ...timestampOrNull,
    description: 'When it was mailed; null: not mailed (yet, or at all: no SMTP_URL, no notificationEmail, or over the hourly cap)',
  },
});
export type Notice = FromSchema<typeof noticeObject>;
export type NoticeType = Notice['type'];

export const noticePage = responseObject({
  data: { type: 'array', items: noticeObject },
  next: nextPage,
});
export type NoticePage = FromSchema<typeof noticePage>;

/** REPLAY-SENSITIVE: a recovery's workflow carries its status and stopped reason. */
export const recoveryStatusSchema = { enum: ['running', 'completed', 'stopped', 'cancelled'] } as const;
export const recoveryStoppedReasonSchema = { enum: ['receiver_failing', 'webhook_paused', 'webhook_deleted', null] } as const;

/** A recovery: the failed and skipped event deliveries of a window, sent again (POST /v3/webhooks/{id}/recoveries). */
export const recoveryObject = responseObject({
  id: { type: 'string', pattern: idPattern('rcv') },
  webhookId: { type: 'string', pattern: idPattern('wh') },
  since: timestamp,
  until: timestamp,
  status: recoveryStatusSchema,
  stoppedReason: { ...recoveryStoppedReasonSchema, description: 'Why a `stopped` recovery stopped; null otherwise' },
  total: { ...count, description: 'Deliveries in its set, fixed when it started' },
  sent: { ...count, description: 'Sends begun; those under way are counted in neither delivered nor failed yet' },
  delivered: count,
  failed: { ...count, description: 'Sends that got no 2xx, or were lost on our side (`internal`)' },
  createdAt: timestamp,
  finishedAt: timestampOrNull,
});
export type Recovery = FromSchema<typeof recoveryObject>;
export type RecoveryStatus = Recovery['status'];
export type RecoveryStoppedReason = NonNullable<Recovery['stoppedReason']>;

export const recoveryList = responseObject({ data: { type: 'array', items: recoveryObject } });

/**
 * What the audit log records: every change made through /v3 (and so the dashboard and the
 * command line), and the service's own (the automatic pause, a relay session's end after its
 * grace), one entry each.
 */
export const AUDIT_ACTIONS = [
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.reactivated',
  'webhook.paused',
  'webhook.secret_rotated',
  'webhook.pinged',
  'webhook.test_event_sent',
  'delivery.redelivered',
  'recovery.started',
  'recovery.cancelled',
  'token.created',
  'token.revoked',
  'account.updated',
  'relay.opened',
  'relay.closed',
] as const;
export const auditActionSchema = { type: 'string', enum: AUDIT_ACTIONS } as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * Who made a change through /v3: none of it is a secret. REPLAY-SENSITIVE: it travels, from the
 * API, in the inputs, Updates and activities of the workflows that make changes.
 */
export const auditActorObject = responseObject({
  tokenId: { type: 'string', pattern: idPattern('tkn'), description: 'The token the request was made with (revoked since, perhaps)' },
  tokenName: { type: 'string', description: "The token's name" },
  clientAddress: {
    type: 'string',
    description: "The client's address: the connection's peer, or, behind TRUST_PROXY_HOPS trusted proxies, the address the outermost saw",
  },
});
export type AuditActor = FromSchema<typeof auditActorObject>;

/** What an entry is about: a webhook (a relay session is one), a logged delivery, a recovery, a token or the account. */
export const auditTargetObject = responseObject({
  type: { type: 'string', enum: ['webhook', 'delivery', 'recovery', 'token', 'account'] },
  id: { type: 'string', description: 'wh_…, dlv_…, rcv_…, tkn_… or acc_…' },
});
export type AuditTarget = FromSchema<typeof auditTargetObject>;

/** What a change made or set, each action its own fields (docs/api.md, "Audit log"); never a secret or a token. */
export const auditDetailsObject = closedObject({
  url: { type: 'string', description: "webhook.created, webhook.deleted: the webhook's URL" },
  events: { ...webhookObject.properties.events, description: 'webhook.created, webhook.updated, relay.opened: the topics set' },
  listIds: { ...webhookObject.properties.listIds, description: 'webhook.created, webhook.updated, relay.opened: the lists set' },
  pausedReason: { type: 'string', enum: ['auto_failures', 'manual'], description: 'webhook.paused: why' },
  consecutiveFailures: { ...count, description: 'webhook.paused by failures: the count that paused it' },
  previous: {
    ...responseObject({
      status: webhookObject.properties.status,
      pausedReason: webhookObject.properties.pausedReason,
      consecutiveFailures: webhookObject.properties.consecutiveFailures,
    }),
    description: 'webhook.reactivated: what the reactivation undid',
  },
  webhookId: { type: 'string', pattern: idPattern('wh'), description: 'delivery.*, recovery.*: the webhook' },
  deliveryId: { ...deliveryIdSchema, description: 'webhook.pinged, webhook.test_event_sent, delivery.redelivered: the new log entry' },
  event: { ...topicSchema, description: 'webhook.test_event_sent: the topic sent' },
  listId: { type: 'string', description: "webhook.test_event_sent: the body's listId" },
  since: { ...timestamp, description: 'recovery.started: its window' },
  until: timestamp,
  total: { ...count, description: 'recovery.started: the deliveries in its set' },
  name: { type: 'string', description: "token.created, token.revoked: the token's name" },
  scopes: { type: 'array', items: scopeSchema, description: 'token.created: its scopes' },
  expiresAt: { ...timestampOrNull, description: 'token.created: when it expires; null: never' },
  notificationEmail: { type: ['string', 'null'], description: 'account.updated: the address set; null: cleared' },
  auth: {
    anyOf: [
      closedObject(
        { type: { enum: ['headers', 'oauth2'] }, headerNames: receiverAuthView.anyOf[0].properties.headerNames },
        { required: ['type'] },
      ),
      { type: 'null' },
    ],
    description: 'webhook.created, webhook.updated: the receiver authentication set (its type, and the header names), never a credential',
  },
  clientCertificate: { ...clientCertificateView, description: 'webhook.created, webhook.updated: the client certificate set' },
});
export type AuditDetails = FromSchema<typeof auditDetailsObject>;

/** One entry of the audit log (GET /v3/account/audit-log). */
export const auditEntryObject = responseObject({
  id: { type: 'string', pattern: idPattern('aud') },
  at: { ...timestamp, description: 'When the change was stored: the entry is written in the same transaction' },
  action: auditActionSchema,
  target: auditTargetObject,
  actor: {
    anyOf: [auditActorObject, { type: 'null' }],
    description: 'Who made the change; null: the service itself (the automatic pause, a relay session closed past its grace)',
  },
  details: auditDetailsObject,
});
export type AuditEntry = FromSchema<typeof auditEntryObject>;

export const auditLogPage = responseObject({
  data: { type: 'array', items: auditEntryObject },
  next: nextPage,
});
export type AuditLogPage = FromSchema<typeof auditLogPage>;

/** One way a request failed its schema (VALIDATION_FAILED): where, and what is wrong there. */
export const validationIssueObject = responseObject({ path: { type: 'string' }, message: { type: 'string' } });
export type ValidationIssue = FromSchema<typeof validationIssueObject>;

/** Every error answer: `code` and `message`, and the fields some codes add. */
export const errorEnvelope = closedObject(
  {
    error: closedObject(
      {
        code: { type: 'string' },
        message: { type: 'string' },
        details: { type: 'array', items: validationIssueObject },
        invalidListIds: { type: 'array', items: { type: 'string' } },
        reason: { type: 'string' },
        statusCode: { type: 'integer' },
        recoveryId: { type: 'string', description: 'RECOVERY_IN_PROGRESS: the recovery under way' },
        requiredScope: { ...scopeSchema, description: 'INSUFFICIENT_SCOPE: the scope the token lacks' },
        oldestPosition: { ...feedPositionSchema, description: "POSITION_EXPIRED: the position of the webhook's oldest item kept" },
      },
      { required: ['code', 'message'] },
    ),
  },
  { required: ['error'] },
);
export type ErrorEnvelope = FromSchema<typeof errorEnvelope>;

export const healthStatus = responseObject({ status: { type: 'string' } });
