// The OpenAPI 3.1 document of both APIs, built from the JSON schemas that validate
// requests (src/api/schemas.ts) and those of the objects it answers with (src/objects.ts):
// one source of truth. Served at GET /v3/openapi.json.
import { version } from '../../package.json';
import { DELIVERY_LOG_KEPT } from '../db/deliveries';
import { FEED_KEPT } from '../db/event-feed';
import {
  byteSize,
  HEALTH_HOURS,
  INTERNAL_BODY_LIMIT_BYTES,
  MAX_RELAY_SESSIONS_PER_ACCOUNT,
  MAX_TOKENS_PER_ACCOUNT,
  MAX_WEBHOOKS_PER_ACCOUNT,
  PUBLIC_BODY_LIMIT_BYTES,
  RECOVERIES_LISTED,
  USAGE_DAYS,
} from '../limits';
import * as objects from '../objects';
import { SCOPES, scopesOf, type Scope } from '../scopes';
import type { ErrorCode } from './errors';
import * as schemas from './schemas';

type Schema = Record<string, unknown>;

const json = (schema: Schema) => ({ 'application/json': { schema } });
const ref = (name: keyof typeof components) => ({ $ref: `#/components/schemas/${name}` });

const components = {
  Webhook: objects.webhookObject,
  CreatedWebhook: objects.createdWebhookObject,
  WebhookList: objects.webhookList,
  WebhookHealthHours: objects.webhookHealthHours,
  PingResult: objects.deliveryResultObject,
  CreatedAccount: objects.createdAccount,
  List: objects.listObject,
  Health: objects.healthStatus,
  RegisterWebhookBody: schemas.registerWebhookBody,
  UpdateWebhookBody: schemas.updateWebhookBody,
  EmptyBody: schemas.emptyBody,
  CreateAccountBody: schemas.createAccountBody,
  PutListBody: schemas.putListBody,
  ListWriteBody: objects.listWriteBody,
  WriteAccepted: objects.writeAccepted,
  DeliveryPage: objects.deliveryPage,
  FeedPage: objects.feedPage,
  DeliveryDetail: objects.deliveryDetail,
  RedeliveryResult: objects.redeliveryResult,
  TestEventBody: schemas.testEventBody,
  TestEventResult: objects.testEventResult,
  RelaySessionBody: schemas.relaySessionBody,
  RelayTicket: objects.relayTicket,
  RotateSecretBody: schemas.rotateSecretBody,
  RotatedSecret: objects.rotatedSecret,
  Account: objects.accountObject,
  UpdateAccountBody: schemas.updateAccountBody,
  Notice: objects.noticeObject,
  NoticePage: objects.noticePage,
  ApiToken: objects.apiTokenObject,
  ApiTokenList: objects.apiTokenList,
  CreatedApiToken: objects.createdApiToken,
  CreateTokenBody: schemas.createTokenBody,
  Usage: objects.usage,
  CreateRecoveryBody: schemas.createRecoveryBody,
  Recovery: objects.recoveryObject,
  RecoveryList: objects.recoveryList,
  AuditEntry: objects.auditEntryObject,
  AuditLogPage: objects.auditLogPage,
} as const;

/** An error response: the envelope, with `code` limited to what this status means here. */
function errors(description: string, codes: ErrorCode[]) {
  const envelope = objects.errorEnvelope;
  return {
    description: `${description}: ${codes.join(', ')}`,
    content: json({
      ...envelope,
      properties: {
        error: {
          ...envelope.properties.error,
          properties: { ...envelope.properties.error.properties, code: { type: 'string', enum: codes } },
        },
      },
    }),
  };
}

const ok = (description: string, schema?: Schema) => ({ description, ...(schema ? { content: json(schema) } : {}) });
/** A response that names what it made in its `Location` header. */
const withLocation = (response: ReturnType<typeof ok>) => ({
  ...response,
  headers: { Location: { required: true, schema: { type: 'string' } } },
});

// Responses every route of a kind shares.
const unavailable = {
  503: {
    ...errors('PostgreSQL or Temporal unreachable; see Retry-After', ['UNAVAILABLE']),
    headers: { 'Retry-After': { required: true, schema: { type: 'integer' } } },
  },
};
const unexpected = { default: errors('Unexpected error', ['INTERNAL']) };
const unauthorized = {
  401: {
    ...errors('Missing, malformed or unknown token', ['UNAUTHORIZED']),
    headers: { 'WWW-Authenticate': { required: true, schema: { type: 'string' } } },
  },
};
const withBody = (limitBytes: number) => ({
  413: errors(`Body over ${byteSize(limitBytes)}; declared so by Content-Length, refused before the token is checked`, [
    'PAYLOAD_TOO_LARGE',
  ]),
  415: errors('Body is not JSON', ['UNSUPPORTED_MEDIA_TYPE']),
});
/**
 * The responses of an operation that needs a token: its own, then 401; 413 and 415 when it
 * takes a body of at most `bodyLimitBytes`; 503; and the unexpected 500.
 */
const withToken = (own: Record<string, unknown>, bodyLimitBytes?: number) => ({
  ...own,
  ...unauthorized,
  ...(bodyLimitBytes === undefined ? {} : withBody(bodyLimitBytes)),
  ...unavailable,
  ...unexpected,
});
/** What an operation that reads a JSON body of at most `bodyLimitBytes` answers: `own`, a 400 for a body that is no JSON or fails its schema, and the rest. */
const withJsonBody = (own: Record<string, unknown>, bodyLimitBytes: number) =>
  withToken({ ...own, 400: errors('Invalid request', ['MALFORMED_JSON', 'VALIDATION_FAILED']) }, bodyLimitBytes);

// The public API's rate limit: every answer past the token check carries the RateLimit-*
// headers (a 413 of a declared body, a 503 or a 500 may come before the limiter answered), and
// 429 is one answer more.
const rateLimitHeaders = {
  'RateLimit-Limit': { required: true, description: 'Requests the bucket holds', schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Remaining': { required: true, description: 'Requests left in it', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Reset': { required: true, description: 'Seconds until it is full again', schema: { type: 'integer', minimum: 0 } },
};
const rateLimited = {
  429: {
    ...errors("Over the account's rate limit, or the client address's without a valid token; nothing was done", ['RATE_LIMITED']),
    headers: { 'Retry-After': { required: true, schema: { type: 'integer', minimum: 1 } } },
  },
};
type Responses = Record<string, { description: string; headers?: Record<string, unknown> }>;
/**
 * An account-token operation's responses, rate-limited: 429 added, the RateLimit-* headers on
 * each but 413 (a body declared over the limit is refused before the limiter is asked), 503 and 500.
 */
function withRateLimit(responses: Responses): Responses {
  const unlimited = new Set(['413', '503', 'default']);
  return Object.fromEntries(
    Object.entries({ ...responses, ...rateLimited }).map(([status, response]) => [
      status,
      unlimited.has(status) ? response : { ...response, headers: { ...rateLimitHeaders, ...response.headers } },
    ]),
  );
}
type Paths = Record<string, Record<string, unknown>>;

/** What an operation says of the scopes it needs. */
const needs = (scopes: readonly Scope[]) =>
  scopes.length === 0
    ? 'Needs a valid token of any scopes.'
    : `Needs the token scope${scopes.length === 1 ? '' : 's'} ${scopes.join(' and ')}: a token lacking ${scopes.length === 1 ? 'it' : 'either'} is answered 403 INSUFFICIENT_SCOPE.`;
const insufficientScope = (scopes: readonly Scope[]) => ({
  403: errors(`The token lacks ${scopes.join(' or ')} (requiredScope names it); nothing was read or done`, ['INSUFFICIENT_SCOPE']),
});

/**
 * Each operation that takes an account's token: the scopes it needs (ROUTE_SCOPES,
 * src/scopes.ts) in its security requirement, in `x-required-scopes` and in its description,
 * with the 403 of a token without them; and its rate limit (429, the RateLimit-* headers).
 */
function accountOperations(paths: Paths): Paths {
  return Object.fromEntries(
    Object.entries(paths).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item).map(([key, value]) => {
          const operation = value as { security?: unknown; description?: string; responses: Responses };
          if (operation.security !== account) return [key, operation];
          const route = `${key.toUpperCase()} ${path}`;
          const scopes = scopesOf(route);
          if (!scopes) throw new Error(`${route} has no entry in ROUTE_SCOPES (src/scopes.ts)`);
          const responses = scopes.length === 0 ? operation.responses : { ...insufficientScope(scopes), ...operation.responses };
          return [
            key,
            {
              ...operation,
              description: [operation.description, needs(scopes)].filter(Boolean).join(' '),
              security: [{ accountToken: [...scopes] }],
              'x-required-scopes': [...scopes],
              responses: withRateLimit(responses),
            },
          ];
        }),
      ),
    ]),
  );
}

const webhookNotFound = { 404: errors("Unknown webhook, or another account's", ['WEBHOOK_NOT_FOUND']) };
/** What a POST that acts on one of the caller's webhooks answers: `success`, or one of these errors. */
const actionOnWebhook = (success: ReturnType<typeof ok>) => withJsonBody({ 200: success, ...webhookNotFound }, PUBLIC_BODY_LIMIT_BYTES);
const body = (name: keyof typeof components, required = true) => ({ required, content: json(ref(name)) });
/**
 * A newest-first listing's GET: each property of `query` a query parameter; it answers `page`,
 * 400 for an invalid query, and `own` (which may say more of the 400).
 */
const pagedListing = (query: { properties: Record<string, unknown> }, page: ReturnType<typeof ok>, own: Record<string, unknown> = {}) => ({
  parameters: Object.entries(query.properties).map(([name, schema]) => ({ name, in: 'query', schema })),
  responses: withToken({ 200: page, 400: errors('Invalid query', ['VALIDATION_FAILED']), ...own }),
});

const webhookId = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'Webhook id (wh_...)' };
const deliveryId = (description: string) => ({ name: 'deliveryId', in: 'path', required: true, schema: { type: 'string' }, description });
const deliveryNotFound = { 404: errors("Unknown webhook or delivery, or another's", ['WEBHOOK_NOT_FOUND', 'DELIVERY_NOT_FOUND']) };
const listId = { name: 'listId', in: 'path', required: true, schema: schemas.idParameter };
const recoveryId = { name: 'recoveryId', in: 'path', required: true, schema: { type: 'string' }, description: 'Recovery id (rcv_...)' };
const recoveryNotFound = {
  404: errors("Unknown webhook or recovery, or another's", ['WEBHOOK_NOT_FOUND', 'RECOVERY_NOT_FOUND']),
};

const account = [{ accountToken: [] }];
const internal = [{ internalToken: [] }];

/**
 * Schemas as the document gives them. A nullable union that ajv validates by its discriminator
 * (`type: ['object', 'null']` beside `oneOf`) becomes the same union with a `null` branch: code
 * generators intersect the first form's `type` with the branches, and lose the null.
 */
function documented<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(documented) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const entries: Record<string, unknown> = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, documented(value)]));
  const { type, oneOf } = entries;
  if (!(Array.isArray(type) && type.includes('null') && Array.isArray(oneOf))) return entries as T;
  // The tag's enum and requirement are each branch's own too.
  const kept = Object.entries(entries).filter(([key]) => !UNION_KEYWORDS.has(key));
  return { ...Object.fromEntries(kept), oneOf: [...(oneOf as unknown[]), { type: 'null' }] } as T;
}

/** What a nullable union's branches say for it, each for itself. */
const UNION_KEYWORDS = new Set(['type', 'discriminator', 'properties', 'required', 'oneOf']);

export function buildOpenApiDocument() {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Webhook subscription and delivery service',
      version,
      description:
        'Public API (/v3) for accounts and internal API (/internal/v3) for upstream services. Every error has the body ' +
        '{"error": {"code", "message", ...details}}. An unknown route answers 404 NOT_FOUND; a known route with another ' +
        'method answers 405 METHOD_NOT_ALLOWED with an Allow header. The routes an account token reaches are rate-limited ' +
        'per account, and per client address for requests without a valid token: their answers carry RateLimit-Limit, ' +
        'RateLimit-Remaining and RateLimit-Reset, and one over the limit is 429 RATE_LIMITED with Retry-After. An account ' +
        `token holds some of the scopes ${SCOPES.join(', ')}; each operation names those it needs in its security ` +
        'requirement and in x-required-scopes, and a token without one is answered 403 INSUFFICIENT_SCOPE with ' +
        'requiredScope, before anything is read or done.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    components: {
      schemas: documented(components),
      securitySchemes: {
        accountToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            `An account's API token (tok_...), holding some of the scopes ${SCOPES.join(', ')} (fixed when it is made). ` +
            "An operation's security requirement lists the scopes it needs.",
        },
        internalToken: { type: 'http', scheme: 'bearer', description: 'INTERNAL_API_TOKEN' },
      },
    },
    paths: accountOperations({
      '/v3/webhooks': {
        get: {
          operationId: 'listWebhooks',
          summary: "The caller's webhooks",
          security: account,
          responses: withToken({ 200: ok('The webhooks', ref('WebhookList')) }),
        },
        post: {
          operationId: 'registerWebhook',
          summary: 'Register a webhook, or update the one with the same URL',
          description:
            'Checks run in this order: auth, body schema (with the receiver credentials: header names, token URL, PEM), ' +
            'URL policy, webhook count, listIds ownership, then a signed ping to the URL, which must answer 2xx. ' +
            '`auth` and `clientCertificate` are presented by every request to the receiver, the ping first; they are ' +
            'stored sealed and never answered back. A token that cannot be fetched fails the ping: 422, reason auth_failed.',
          security: account,
          requestBody: body('RegisterWebhookBody'),
          responses: withToken(
            {
              201: withLocation(ok('Created; the only response that holds the secret', ref('CreatedWebhook'))),
              200: ok('Updated (same URL); the id, secret, status and count are kept', ref('Webhook')),
              400: errors('Invalid request', ['MALFORMED_JSON', 'VALIDATION_FAILED', 'URL_NOT_ALLOWED', 'INVALID_LIST_IDS']),
              409: errors(`The account has ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks`, ['WEBHOOK_LIMIT_EXCEEDED']),
              422: errors('The ping did not get a 2xx', ['WEBHOOK_UNREACHABLE']),
            },
            PUBLIC_BODY_LIMIT_BYTES,
          ),
        },
      },
      '/v3/webhooks/{id}': {
        parameters: [webhookId],
        get: {
          operationId: 'getWebhook',
          security: account,
          responses: withToken({ 200: ok('The webhook', ref('Webhook')), ...webhookNotFound }),
        },
        patch: {
          operationId: 'updateWebhook',
          summary: 'Reactivate or pause; change events, listIds, or the receiver credentials (auth, clientCertificate; null removes)',
          security: account,
          requestBody: body('UpdateWebhookBody'),
          responses: withToken(
            {
              200: ok('The webhook after the change', ref('Webhook')),
              400: errors('Invalid request', ['MALFORMED_JSON', 'VALIDATION_FAILED', 'INVALID_LIST_IDS']),
              409: errors('A status or receiver credentials for a relay session, which is never paused and presents none', [
                'RELAY_SESSION',
              ]),
              ...webhookNotFound,
            },
            PUBLIC_BODY_LIMIT_BYTES,
          ),
        },
        delete: {
          operationId: 'deleteWebhook',
          security: account,
          responses: withToken({ 204: ok('Deleted; nothing more is delivered'), ...webhookNotFound }),
        },
      },
      '/v3/webhooks/{id}/pings': {
        parameters: [webhookId],
        post: {
          operationId: 'pingWebhook',
          summary: 'Send a signed ping now (also to a paused webhook); never counted as a failure',
          security: account,
          requestBody: body('EmptyBody', false),
          responses: actionOnWebhook(ok('What the ping got', ref('PingResult'))),
        },
      },
      '/v3/webhooks/{id}/test-events': {
        parameters: [webhookId],
        post: {
          operationId: 'sendTestEvent',
          summary: 'Send a signed delivery of a chosen topic now, as a test (also to a paused webhook); never counted as a failure',
          description:
            'The body is an event\'s, {"event","listId","cursor","at"}: listId as given (a list the account owns or is a member ' +
            'of), else "test"; cursor 0, which no write has; at now. The headers are any delivery\'s plus SVC-Test: 1. Logged ' +
            'with kind "test"; it cannot be redelivered.',
          security: account,
          requestBody: body('TestEventBody'),
          responses: {
            ...actionOnWebhook(ok('What the test event got', ref('TestEventResult'))),
            400: errors('Invalid request', ['MALFORMED_JSON', 'VALIDATION_FAILED', 'INVALID_LIST_IDS']),
          },
        },
      },
      '/v3/webhooks/{id}/health': {
        parameters: [webhookId],
        get: {
          operationId: 'getWebhookHealth',
          summary: `The webhook's event deliveries of the last ${HEALTH_HOURS} hours, hour by hour`,
          description:
            `The webhook's health (as its \`health\`) and its ${HEALTH_HOURS} UTC hours, the current one and the ` +
            `${HEALTH_HOURS - 1} before it, oldest first, each with its event deliveries delivered, failed and skipped, ` +
            'counted in the hour each was logged (its attemptedAt); the totals are the sums of these hours. Pings, ' +
            'redeliveries and test events are not counted.',
          security: account,
          responses: withToken({ 200: ok('The health and its hours', ref('WebhookHealthHours')), ...webhookNotFound }),
        },
      },
      '/v3/webhooks/{id}/deliveries': {
        parameters: [webhookId],
        get: {
          operationId: 'listDeliveries',
          summary: `The delivery log: events, pings, redeliveries and test events, newest first (at least the last ${DELIVERY_LOG_KEPT} are kept)`,
          description: 'The filters outcome, kind and event are each optional and combine with each other and with paging.',
          security: account,
          ...pagedListing(schemas.deliveriesQuery, ok('A page of attempts', ref('DeliveryPage')), webhookNotFound),
        },
      },
      '/v3/webhooks/{id}/events': {
        parameters: [webhookId],
        get: {
          operationId: 'listEvents',
          summary: "The webhook's event feed: every event delivery planned for it, oldest first, to catch up by pulling",
          description:
            'One item per write and topic, whether delivered, failed, skipped while paused or not yet sent, in the order ' +
            "the writes were recorded; event, listId, cursor and at are the pushed body's, and deliveryId is the push's " +
            'SVC-Delivery, so a receiver drops a repeat between push and pull by id. Pings, test events, probes and ' +
            "redeliveries are not in it. Pass next back as after: it is the last item's position, or the after given when " +
            'the page is empty. With wait and nothing after the position, the answer is held up to that many seconds and ' +
            "comes as soon as an item is recorded. Items are kept RETENTION_DAYS, and a webhook's newest " +
            `${FEED_KEPT} whatever their age; a position older than the oldest kept item is 410 POSITION_EXPIRED with ` +
            "oldestPosition, and a malformed position or another webhook's is 400 VALIDATION_FAILED.",
          security: account,
          ...pagedListing(schemas.eventFeedQuery, ok('A page of the feed', ref('FeedPage')), {
            ...webhookNotFound,
            410: errors('The position is older than the oldest item kept (oldestPosition names it)', ['POSITION_EXPIRED']),
          }),
        },
      },
      '/v3/webhooks/{id}/deliveries/{deliveryId}': {
        parameters: [webhookId, deliveryId('A logged attempt (dlv_...)')],
        get: {
          operationId: 'getDelivery',
          summary: 'One entry of the delivery log, with what was sent and what came back',
          description:
            'The log entry plus request (url, headers as sent, the exact body; never the secret) and response (status, ' +
            "headers kept to 4 KiB, the first 4 KiB of the body as UTF-8 text). The receiver's text is data: show it as " +
            'text, never as markup.',
          security: account,
          responses: withToken({ 200: ok('The entry', ref('DeliveryDetail')), ...deliveryNotFound }),
        },
      },
      '/v3/webhooks/{id}/deliveries/{deliveryId}/redeliveries': {
        parameters: [webhookId, deliveryId('A logged event delivery or redelivery (dlv_...)')],
        post: {
          operationId: 'redeliverDelivery',
          summary: 'Send a logged event again, now, once (also to a paused webhook); never counted as a failure',
          description:
            'The same body byte for byte and the same SVC-Event, signed with the current secret, under a new SVC-Delivery ' +
            'id. Logged with kind "redelivery" and redeliveryOf the id it repeats.',
          security: account,
          requestBody: body('EmptyBody', false),
          responses: {
            ...actionOnWebhook(ok('What the redelivery got', ref('RedeliveryResult'))),
            ...deliveryNotFound,
            409: errors('A ping or test event is not redelivered', ['NOT_REDELIVERABLE']),
          },
        },
      },
      '/v3/webhooks/{id}/secret': {
        parameters: [webhookId],
        post: {
          operationId: 'rotateSecret',
          summary: 'Replace the signing secret: a random one, or your own',
          description:
            'Every delivery, redelivery and ping that starts after the answer is signed with the new secret; the old one ' +
            'is discarded. A delivery already under way keeps the secret it started with.',
          security: account,
          requestBody: body('RotateSecretBody', false),
          responses: actionOnWebhook(ok('The new secret, shown this once', ref('RotatedSecret'))),
        },
      },
      '/v3/relay-sessions': {
        post: {
          operationId: 'createRelaySession',
          summary: 'Open a relay session (svc-webhooks listen): a webhook whose deliveries go over a connection the caller opens',
          description:
            'The session is a webhook with relay: true and url relay://{id}, signed and logged as any other, that never pauses ' +
            `and does not count against the ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; an account has at most ` +
            `${MAX_RELAY_SESSIONS_PER_ACCOUNT}. Its deliveries go to the WebSocket opened with a ticket of ` +
            'POST /v3/webhooks/{id}/relay-connections; while none is open each fails at once with relay_disconnected. ' +
            'A session without a connection for RELAY_GRACE_SECONDS (60) is deleted.',
          security: account,
          requestBody: body('RelaySessionBody', false),
          responses: withToken(
            {
              201: withLocation(ok('Opened; the only response that holds the secret', ref('CreatedWebhook'))),
              400: errors('Invalid request', ['MALFORMED_JSON', 'VALIDATION_FAILED', 'INVALID_LIST_IDS']),
              409: errors(`The account has ${MAX_RELAY_SESSIONS_PER_ACCOUNT} relay sessions`, ['RELAY_LIMIT_EXCEEDED']),
            },
            PUBLIC_BODY_LIMIT_BYTES,
          ),
        },
      },
      '/v3/webhooks/{id}/relay-connections': {
        parameters: [webhookId],
        post: {
          operationId: 'createRelayConnection',
          summary: "A single-use ticket to open the relay session's connection, valid for 30 seconds",
          description:
            'GET /v3/relay-connections/{ticket} with a WebSocket upgrade opens the connection; the newest connection of a ' +
            'session receives its deliveries. The messages are described in docs/receiving.md.',
          security: account,
          requestBody: body('EmptyBody', false),
          responses: withJsonBody(
            {
              201: ok('The ticket', ref('RelayTicket')),
              409: errors('The webhook is not a relay session', ['NOT_A_RELAY_SESSION']),
              ...webhookNotFound,
            },
            PUBLIC_BODY_LIMIT_BYTES,
          ),
        },
      },
      '/v3/webhooks/{id}/recoveries': {
        parameters: [webhookId],
        post: {
          operationId: 'createRecovery',
          summary: 'Send again every event delivery of a window that failed or was skipped, as a background task',
          description:
            'Every event delivery of the webhook logged in [since, until) whose outcome is failed (internal included) or ' +
            'skipped, unless a redelivery of the same event was delivered since: fixed when it starts (total), sent oldest ' +
            'first as redeliveries (the same body byte for byte, the current secret, a new SVC-Delivery id, one attempt, ' +
            'never counted against the webhook), at most RECOVERY_RATE_PER_SECOND a second. It stops after 5 failed sends ' +
            'in a row (receiver_failing), or when the webhook is paused or deleted. One at a time per webhook.',
          security: account,
          requestBody: body('CreateRecoveryBody'),
          responses: withToken(
            {
              202: withLocation(ok('Started; poll it at its Location', ref('Recovery'))),
              400: errors('Invalid request, since not before until, or until in the future', ['MALFORMED_JSON', 'VALIDATION_FAILED']),
              ...webhookNotFound,
              409: errors('Another recovery of the webhook is under way (its id in recoveryId), or the webhook is paused', [
                'RECOVERY_IN_PROGRESS',
                'WEBHOOK_PAUSED',
              ]),
            },
            PUBLIC_BODY_LIMIT_BYTES,
          ),
        },
        get: {
          operationId: 'listRecoveries',
          summary: `The webhook's recoveries, newest first (at most the ${RECOVERIES_LISTED} newest)`,
          security: account,
          responses: withToken({ 200: ok('The recoveries', ref('RecoveryList')), ...webhookNotFound }),
        },
      },
      '/v3/webhooks/{id}/recoveries/{recoveryId}': {
        parameters: [webhookId, recoveryId],
        get: {
          operationId: 'getRecovery',
          summary: 'A recovery and its progress',
          security: account,
          responses: withToken({ 200: ok('The recovery', ref('Recovery')), ...recoveryNotFound }),
        },
        delete: {
          operationId: 'cancelRecovery',
          summary: 'Cancel a recovery: no further send starts',
          description: 'Answers the recovery: cancelled, or as it ended if it had already ended. Sends under way finish and are counted.',
          security: account,
          responses: withToken({ 200: ok('The recovery', ref('Recovery')), ...recoveryNotFound }),
        },
      },
      '/v3/account': {
        get: {
          operationId: 'getAccount',
          summary: "The caller's account",
          security: account,
          responses: withToken({ 200: ok('The account', ref('Account')) }),
        },
        patch: {
          operationId: 'updateAccount',
          summary: "Set or clear where the account's notices are mailed",
          security: account,
          requestBody: body('UpdateAccountBody'),
          responses: withJsonBody({ 200: ok('The account after the change', ref('Account')) }, PUBLIC_BODY_LIMIT_BYTES),
        },
      },
      '/v3/account/notices': {
        get: {
          operationId: 'listNotices',
          summary: `The account's notices, newest first (kept RETENTION_DAYS)`,
          description:
            'webhook.failing when a webhook fails 10 deliveries in a row, webhook.paused when 20 pause it; once per ' +
            'streak of failures. Paged like the delivery log; webhookId narrows it to one webhook.',
          security: account,
          ...pagedListing(schemas.noticesQuery, ok('A page of notices', ref('NoticePage'))),
        },
      },
      '/v3/account/audit-log': {
        get: {
          operationId: 'listAuditLog',
          summary: 'Who changed what in the account: the audit log, newest first (kept RETENTION_DAYS)',
          description:
            'One entry for every change made through /v3 (and so the dashboard and the command line), written in the ' +
            'same transaction as the change: its action, its target, its actor (the token by id and name, and the ' +
            "client's address) and what it set (details, never a secret or a token). The service's own changes (the " +
            'automatic pause, a relay session closed past its grace) have actor null. A refused request records nothing. ' +
            'Paged like the delivery log; action narrows it to one action.',
          security: account,
          ...pagedListing(schemas.auditLogQuery, ok('A page of entries', ref('AuditLogPage')), {
            400: errors('Invalid query: a limit out of 1 to 100, a before that is no entry id, an unknown action', ['VALIDATION_FAILED']),
          }),
        },
      },
      '/v3/account/token': {
        get: {
          operationId: 'getCurrentToken',
          summary: 'The token the request is made with: its name, prefix, times and scopes',
          description: 'What the token may do, which any token may ask: the dashboard reads it to offer only what the token may do.',
          security: account,
          responses: withToken({ 200: ok('The token; never the token itself', ref('ApiToken')) }),
        },
      },
      '/v3/account/tokens': {
        get: {
          operationId: 'listTokens',
          summary: "The account's API tokens, oldest first",
          security: account,
          responses: withToken({ 200: ok('The tokens; never the tokens themselves', ref('ApiTokenList')) }),
        },
        post: {
          operationId: 'createToken',
          summary: `Make an API token (at most ${MAX_TOKENS_PER_ACCOUNT} per account)`,
          description:
            "The new token holds the scopes asked for (default: all of the calling token's), which the calling token must " +
            'hold: a token never grants a scope it lacks. Checks run in this order: auth and scope, body schema, expiresAt, ' +
            'the scopes asked for, the token count.',
          security: account,
          requestBody: body('CreateTokenBody'),
          responses: withToken(
            {
              201: ok('Created; the only response that holds the token', ref('CreatedApiToken')),
              400: errors('Invalid request, or expiresAt not in the future', ['MALFORMED_JSON', 'VALIDATION_FAILED']),
              403: errors('The token lacks account:admin, or a scope it asks to grant (requiredScope names it); nothing was made', [
                'INSUFFICIENT_SCOPE',
              ]),
              409: errors(`The account has ${MAX_TOKENS_PER_ACCOUNT} tokens`, ['TOKEN_LIMIT_EXCEEDED']),
            },
            PUBLIC_BODY_LIMIT_BYTES,
          ),
        },
      },
      '/v3/account/tokens/{tokenId}': {
        parameters: [{ name: 'tokenId', in: 'path', required: true, schema: { type: 'string' }, description: 'Token id (tkn_...)' }],
        delete: {
          operationId: 'revokeToken',
          summary: 'Revoke a token: every API process refuses it from the answer on',
          description: "Any of the account's tokens, the one the request is made with included (the account then needs another).",
          security: account,
          responses: withToken({
            204: ok('Revoked'),
            404: errors("Unknown token, or another account's", ['TOKEN_NOT_FOUND']),
          }),
        },
      },
      '/v3/account/usage': {
        get: {
          operationId: 'getUsage',
          summary: `The fair-use meter: API requests and deliveries per UTC day, the last ${USAGE_DAYS} days`,
          description:
            "apiRequests counts the requests made with any of the account's tokens (a second or so behind, per API process); " +
            'deliveries counts the POSTs the service made to its webhooks. Polling costs a request per look; a webhook ' +
            'costs a delivery per change.',
          security: account,
          responses: withToken({ 200: ok(`${USAGE_DAYS} days, oldest first`, ref('Usage')) }),
        },
      },
      '/v3/openapi.json': {
        get: {
          operationId: 'getOpenApiDocument',
          security: [],
          responses: { 200: ok('This document', { type: 'object' }), ...unexpected },
        },
      },
      '/healthz': {
        get: { operationId: 'health', security: [], responses: { 200: ok('The process is up', ref('Health')), ...unexpected } },
      },
      '/metrics': {
        get: {
          operationId: 'metrics',
          summary: "Prometheus metrics of this process, then the Temporal SDK's",
          security: [],
          responses: {
            200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } },
            ...unexpected,
          },
        },
      },
      '/readyz': {
        get: {
          operationId: 'readiness',
          security: [],
          responses: { 200: ok('PostgreSQL and Temporal are reachable', ref('Health')), ...unavailable, ...unexpected },
        },
      },
      '/internal/v3/accounts': {
        post: {
          operationId: 'createAccount',
          security: internal,
          requestBody: body('CreateAccountBody'),
          responses: withJsonBody(
            { 201: ok('Created; the token is shown once and stored only as a hash', ref('CreatedAccount')) },
            INTERNAL_BODY_LIMIT_BYTES,
          ),
        },
      },
      '/internal/v3/lists/{listId}': {
        parameters: [listId],
        put: {
          operationId: 'putList',
          summary: 'Create or replace a list (keeps its cursor; delivers nothing)',
          security: internal,
          requestBody: body('PutListBody'),
          responses: withToken(
            {
              201: ok('Created', ref('List')),
              200: ok('Replaced', ref('List')),
              400: errors('Invalid request or unknown account', ['MALFORMED_JSON', 'VALIDATION_FAILED']),
            },
            INTERNAL_BODY_LIMIT_BYTES,
          ),
        },
        delete: {
          operationId: 'deleteList',
          security: internal,
          responses: withToken({
            204: ok('Deleted'),
            400: errors('Invalid list id', ['VALIDATION_FAILED']),
            404: errors('Unknown list', ['LIST_NOT_FOUND']),
          }),
        },
      },
      '/internal/v3/lists/{listId}/writes': {
        parameters: [listId],
        post: {
          operationId: 'reportListWrite',
          summary: 'Report a write to a list; its deliveries follow',
          description:
            'Answers 202 once the write is durable (recorded, its workflow started). The same writeId with the same ' +
            'body answers the same again and delivers nothing twice.',
          security: internal,
          requestBody: body('ListWriteBody'),
          responses: withToken(
            {
              202: ok('Accepted', ref('WriteAccepted')),
              400: errors('Invalid write, list id or unknown account', ['MALFORMED_JSON', 'VALIDATION_FAILED']),
              404: errors('Unknown list', ['LIST_NOT_FOUND']),
              409: errors('writeId already used for this list with another body', ['WRITE_ID_REUSED']),
            },
            INTERNAL_BODY_LIMIT_BYTES,
          ),
        },
      },
    }),
  };
}
