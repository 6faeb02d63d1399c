// JSON schemas (draft 2020-12, the dialect of OpenAPI 3.1) of every request, and the types
// derived from them; those the modules beneath the API read too (a list write, the delivery
// log's filters) are src/objects.ts's. Requests are validated with them, compiled once by one
// ajv instance; the OpenAPI document is built from the same objects, with the responses'.
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import type { FromSchema } from 'json-schema-to-ts';
import { idPattern, type IdPrefix } from '../ids';
import { MAX_AUTH_HEADERS, MAX_LIST_IDS, MAX_LIST_MEMBERS } from '../limits';
import {
  auditActionSchema,
  closedObject,
  deliveryLogFilters,
  feedPositionSchema,
  isoTimeSchema as isoTime,
  listWriteBody,
  brokerListWrite,
  scopeSchema,
  topicSchema,
  upstreamIdSchema as id,
  type ListWriteBody,
  type BrokerListWrite,
  type ValidationIssue,
} from '../objects';
import { relayAnswerMessage, type RelayAnswerMessage } from '../relay/protocol';
import { SCOPES } from '../scopes';
import { TOPICS } from '../topics';
import { apiErrors } from './errors';

// discriminator: a receiver's `auth` is judged by the branch its `type` names, and its errors are that branch's.
const ajv = new Ajv2020({ allErrors: false, strict: true, discriminator: true });

const events = { type: 'array', minItems: 1, maxItems: TOPICS.length, uniqueItems: true, items: topicSchema } as const;
const listIds = { type: 'array', maxItems: MAX_LIST_IDS, uniqueItems: true, items: id } as const;
// No NUL: PostgreSQL text cannot hold it (it was a 500).
const nameText = { type: 'string', minLength: 1, pattern: '^[^\\u0000]*$', description: 'Any text but the NUL character' } as const;

// ---- requests ----

/**
 * Text a header can carry and a form can hold: no control characters (C0, DEL, C1), nothing
 * beyond Latin-1 (HTTP sends each character as one byte: undici refuses any other).
 */
const HEADER_TEXT = '^[\\u0020-\\u007e\\u00a0-\\u00ff]*$';
const headerText = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength, pattern: HEADER_TEXT }) as const;

/**
 * What authenticates every request to the receiver (DESIGN §19), told apart by `type`; the
 * rules past the schema (header names, token URL, PEM) are src/delivery/receiver-credentials.ts's.
 */
const receiverAuthInput = {
  type: ['object', 'null'],
  discriminator: { propertyName: 'type' },
  required: ['type'],
  properties: { type: { enum: ['headers', 'oauth2'] } },
  oneOf: [
    closedObject(
      {
        type: { const: 'headers' },
        headers: {
          type: 'object',
          minProperties: 1,
          maxProperties: MAX_AUTH_HEADERS,
          propertyNames: { maxLength: 256 },
          additionalProperties: headerText(1024),
          description: `1 to ${MAX_AUTH_HEADERS} headers sent with every request: names RFC 9110 tokens, values 1 to 1024 characters`,
        },
      },
      { required: ['type', 'headers'] },
    ),
    closedObject(
      {
        type: { const: 'oauth2' },
        tokenUrl: {
          type: 'string',
          minLength: 1,
          maxLength: 2048,
          description: 'https: URL of the token endpoint (client credentials grant)',
        },
        clientId: headerText(1024),
        clientSecret: headerText(1024),
        scope: headerText(1024),
        audience: headerText(1024),
      },
      { required: ['type', 'tokenUrl', 'clientId', 'clientSecret'] },
    ),
  ],
  description: 'Credentials every request to the receiver presents; null: none (the default). Never answered back',
} as const;

const clientCertificateInput = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['certificate', 'privateKey'],
  properties: {
    certificate: { type: 'string', minLength: 1, maxLength: 16384, description: 'PEM: the certificate, then any intermediates' },
    privateKey: { type: 'string', minLength: 1, maxLength: 16384, description: 'PEM: its unencrypted private key' },
  },
  description: 'The client certificate of mutual TLS; null: none (the default). The key is never answered back',
} as const;

export const registerWebhookBody = closedObject(
  {
    url: { type: 'string', minLength: 1, maxLength: 2048, description: 'Absolute https: URL of the receiver' },
    events: { ...events, description: 'Topics; default ["list.changed"]' },
    listIds: { ...listIds, description: "Lists to restrict deliveries to; empty or omitted: all of the account's lists" },
    auth: { ...receiverAuthInput, description: `${receiverAuthInput.description}; omitted: a webhook registered again keeps its own` },
    clientCertificate: {
      ...clientCertificateInput,
      description: `${clientCertificateInput.description}; omitted: a webhook registered again keeps its own`,
    },
  },
  { required: ['url'] },
);
export type RegisterWebhookBody = FromSchema<typeof registerWebhookBody>;

export const updateWebhookBody = closedObject(
  {
    status: { type: 'string', enum: ['active', 'paused'], description: 'active reactivates (count reset); paused pauses by hand' },
    events,
    listIds,
    auth: { ...receiverAuthInput, description: `${receiverAuthInput.description}; omitted: unchanged` },
    clientCertificate: { ...clientCertificateInput, description: `${clientCertificateInput.description}; omitted: unchanged` },
  },
  { minProperties: 1 },
);
export type UpdateWebhookBody = FromSchema<typeof updateWebhookBody>;

/** Routes without a body accept none or an empty object. */
export const emptyBody = { type: 'object', additionalProperties: false } as const;

/**
 * An email address as mail is addressed in practice (RFC 5321/5322 without quoting or
 * comments): a dot-atom local part of at most 64 characters, `@`, and a domain name of two or
 * more labels (letters, digits, inner hyphens; at most 63 each); 254 characters in all.
 */
const EMAIL_PATTERN =
  "^(?=[^@]{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*" +
  '@[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$';
const notificationEmail = {
  type: ['string', 'null'],
  maxLength: 254,
  pattern: EMAIL_PATTERN,
  description: "Where the account's notices are mailed (an address of at most 254 characters); null: nowhere",
} as const;

export const createAccountBody = closedObject({ name: { ...nameText, maxLength: 200 }, notificationEmail }, { required: ['name'] });
export type CreateAccountBody = FromSchema<typeof createAccountBody>;

export const putListBody = closedObject(
  { ownerAccountId: id, memberAccountIds: { type: 'array', maxItems: MAX_LIST_MEMBERS, uniqueItems: true, items: id } },
  { required: ['ownerAccountId'] },
);
export type PutListBody = FromSchema<typeof putListBody>;

export const testEventBody = closedObject(
  {
    event: { ...topicSchema, description: 'The topic of the test event' },
    listId: { ...id, description: 'A list the account owns or is a member of, sent as the body\'s listId; default "test"' },
  },
  { required: ['event'] },
);
export type TestEventBody = FromSchema<typeof testEventBody>;

export const relaySessionBody = closedObject({
  events: { ...events, description: 'Topics; default: all of them' },
  listIds: { ...listIds, description: "Lists to restrict deliveries to; empty or omitted: all of the account's lists" },
});
export type RelaySessionBody = FromSchema<typeof relaySessionBody>;

export const rotateSecretBody = closedObject({
  secret: {
    type: 'string',
    pattern: '^whsec_[A-Za-z0-9_-]{32,100}$',
    description: 'Your own new secret (whsec_ then 32 to 100 of A-Z a-z 0-9 _ -); omitted: a random one',
  },
});
export type RotateSecretBody = FromSchema<typeof rotateSecretBody>;

export const createRecoveryBody = closedObject(
  {
    since: { ...isoTime, description: 'ISO 8601 time: deliveries logged at or after it are recovered' },
    until: { ...isoTime, description: 'ISO 8601 time, not in the future: deliveries logged before it; default now' },
  },
  { required: ['since'] },
);
export type CreateRecoveryBody = FromSchema<typeof createRecoveryBody>;

export const createTokenBody = closedObject(
  {
    name: { ...nameText, maxLength: 100 },
    expiresAt: { ...isoTime, description: 'ISO 8601 time, in the future, from which the token is refused; omitted: never' },
    scopes: {
      type: 'array',
      minItems: 1,
      maxItems: SCOPES.length,
      uniqueItems: true,
      items: scopeSchema,
      description: 'What the new token may do: some of the scopes of the token that makes it; omitted: all of them',
    },
  },
  { required: ['name'] },
);
export type CreateTokenBody = FromSchema<typeof createTokenBody>;

/**
 * The query of a newest-first listing: a page of `limit` entries, `before` one of the listing's ids
 * (`idPrefix`), and the listing's own filters.
 */
function pageQuery<const F extends Record<string, object>>(idPrefix: IdPrefix, filters: F) {
  return closedObject({
    limit: { type: 'string', pattern: '^(100|[1-9][0-9]?)$', description: '1 to 100, default 20' },
    before: { type: 'string', pattern: idPattern(idPrefix), description: 'The `next` of the previous page' },
    ...filters,
  });
}

export const deliveriesQuery = pageQuery('dlv', deliveryLogFilters.properties);
export type DeliveriesQuery = FromSchema<typeof deliveriesQuery>;

export const eventFeedQuery = closedObject({
  after: { ...feedPositionSchema, description: "The `next` of the previous page; omitted: from the webhook's oldest item kept" },
  limit: { type: 'string', pattern: '^(500|[1-4][0-9]{2}|[1-9][0-9]?)$', description: '1 to 500, default 100' },
  wait: {
    type: 'string',
    pattern: '^(30|[12]?[0-9])$',
    description:
      '0 to 30, default 0: when nothing follows the position, hold the answer up to this many seconds, until an item is recorded',
  },
});
export type EventFeedQuery = FromSchema<typeof eventFeedQuery>;

export const updateAccountBody = closedObject({ notificationEmail }, { required: ['notificationEmail'] });
export type UpdateAccountBody = FromSchema<typeof updateAccountBody>;

export const noticesQuery = pageQuery('ntc', {
  webhookId: { type: 'string', pattern: idPattern('wh'), description: "Only this webhook's notices" },
});
export type NoticesQuery = FromSchema<typeof noticesQuery>;

export const auditLogQuery = pageQuery('aud', { action: { ...auditActionSchema, description: 'Only entries of this action' } });
export type AuditLogQuery = FromSchema<typeof auditLogQuery>;

export const idParameter = id;

// ---- validation ----

export const validators = {
  registerWebhookBody: ajv.compile<RegisterWebhookBody>(registerWebhookBody),
  updateWebhookBody: ajv.compile<UpdateWebhookBody>(updateWebhookBody),
  emptyBody: ajv.compile<Record<string, never>>(emptyBody),
  createAccountBody: ajv.compile<CreateAccountBody>(createAccountBody),
  putListBody: ajv.compile<PutListBody>(putListBody),
  listWriteBody: ajv.compile<ListWriteBody>(listWriteBody),
  /** Not a request: a message consumed from a broker (src/intake/brokers.ts). */
  brokerListWrite: ajv.compile<BrokerListWrite>(brokerListWrite),
  rotateSecretBody: ajv.compile<RotateSecretBody>(rotateSecretBody),
  testEventBody: ajv.compile<TestEventBody>(testEventBody),
  relaySessionBody: ajv.compile<RelaySessionBody>(relaySessionBody),
  /** Not a request: a relay's answer over its WebSocket connection (src/relay/hub.ts). */
  relayAnswerMessage: ajv.compile<RelayAnswerMessage>(relayAnswerMessage),
  createRecoveryBody: ajv.compile<CreateRecoveryBody>(createRecoveryBody),
  deliveriesQuery: ajv.compile<DeliveriesQuery>(deliveriesQuery),
  eventFeedQuery: ajv.compile<EventFeedQuery>(eventFeedQuery),
  updateAccountBody: ajv.compile<UpdateAccountBody>(updateAccountBody),
  noticesQuery: ajv.compile<NoticesQuery>(noticesQuery),
  auditLogQuery: ajv.compile<AuditLogQuery>(auditLogQuery),
  createTokenBody: ajv.compile<CreateTokenBody>(createTokenBody),
  id: ajv.compile<string>(idParameter),
};

function toIssue(error: ErrorObject, prefix: string): ValidationIssue {
  const base = `${prefix}${error.instancePath}`;
  switch (error.keyword) {
    case 'required':
      return { path: `${base}/${error.params.missingProperty}`, message: 'is required' };
    case 'additionalProperties':
      return { path: `${base}/${error.params.additionalProperty}`, message: 'is not allowed' };
    default:
      return { path: base || '/', message: error.message ?? 'is invalid' };
  }
}

/**
 * Returns `data` typed as the schema says, or throws VALIDATION_FAILED naming where it
 * failed. `prefix` places the path, e.g. '' for the body or '/params/id' for a path parameter.
 */
export function validate<T>(validator: ValidateFunction<T>, data: unknown, prefix = ''): T {
  if (validator(data)) return data;
  throw apiErrors.validationFailed((validator.errors ?? []).map((error) => toIssue(error, prefix)));
}
