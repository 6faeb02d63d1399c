// Typed API errors, and what each is answered with: the contract's envelope (src/objects.ts),
// { "error": { "code", "message", ...details } }, by the error middleware and the front door alike.
import type { ErrorEnvelope, ValidationIssue } from '../objects';
import type { Scope } from '../scopes';

export type ErrorCode =
  | 'MALFORMED_JSON'
  | 'VALIDATION_FAILED'
  | 'INVALID_LIST_IDS'
  | 'URL_NOT_ALLOWED'
  | 'UNAUTHORIZED'
  | 'INSUFFICIENT_SCOPE'
  | 'WEBHOOK_NOT_FOUND'
  | 'LIST_NOT_FOUND'
  | 'NOT_FOUND'
  | 'DELIVERY_NOT_FOUND'
  | 'NOT_REDELIVERABLE'
  | 'RECOVERY_NOT_FOUND'
  | 'RECOVERY_IN_PROGRESS'
  | 'WEBHOOK_PAUSED'
  | 'METHOD_NOT_ALLOWED'
  | 'WEBHOOK_LIMIT_EXCEEDED'
  | 'RELAY_LIMIT_EXCEEDED'
  | 'RELAY_SESSION'
  | 'NOT_A_RELAY_SESSION'
  | 'WRITE_ID_REUSED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'WEBHOOK_UNREACHABLE'
  | 'TOKEN_NOT_FOUND'
  | 'TOKEN_LIMIT_EXCEEDED'
  | 'RATE_LIMITED'
  | 'POSITION_EXPIRED'
  | 'INTERNAL'
  | 'UNAVAILABLE';

/** The fields of the envelope's `error` that some codes add. */
export type ErrorDetails = Omit<ErrorEnvelope['error'], 'code' | 'message'>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** Extra fields of the envelope, such as `invalidListIds` or `reason`. */
    readonly details: ErrorDetails = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const apiErrors = {
  malformedJson: () => new ApiError(400, 'MALFORMED_JSON', 'The request body is not valid JSON.'),
  validationFailed: (details: ValidationIssue[]) =>
    new ApiError(400, 'VALIDATION_FAILED', 'The request does not match its schema.', { details }),
  invalidListIds: (invalidListIds: string[]) =>
    new ApiError(400, 'INVALID_LIST_IDS', 'listIds holds lists that are unknown or not owned by this account.', {
      invalidListIds,
    }),
  urlNotAllowed: (reason: string, message: string) => new ApiError(400, 'URL_NOT_ALLOWED', message, { reason }),
  unauthorized: () => new ApiError(401, 'UNAUTHORIZED', 'A valid Bearer token is required.', {}, { 'WWW-Authenticate': 'Bearer' }),
  insufficientScope: (requiredScope: Scope) =>
    new ApiError(403, 'INSUFFICIENT_SCOPE', `This token lacks the scope ${requiredScope}, which this route needs.`, { requiredScope }),
  scopeNotGrantable: (requiredScope: Scope) =>
    new ApiError(403, 'INSUFFICIENT_SCOPE', `A token can only grant scopes it holds: this one lacks ${requiredScope}.`, { requiredScope }),
  webhookNotFound: () => new ApiError(404, 'WEBHOOK_NOT_FOUND', 'No such webhook.'),
  listNotFound: () => new ApiError(404, 'LIST_NOT_FOUND', 'No such list.'),
  notFound: () => new ApiError(404, 'NOT_FOUND', 'No such route.'),
  deliveryNotFound: () => new ApiError(404, 'DELIVERY_NOT_FOUND', "No such delivery in this webhook's log."),
  notRedeliverable: () =>
    new ApiError(409, 'NOT_REDELIVERABLE', 'A ping, test event or probe cannot be redelivered; send a new one instead.'),
  testEventListNotAllowed: (listId: string) =>
    new ApiError(400, 'INVALID_LIST_IDS', 'listId is not a list this account owns or is a member of.', { invalidListIds: [listId] }),
  recoveryNotFound: () => new ApiError(404, 'RECOVERY_NOT_FOUND', 'No such recovery of this webhook.'),
  recoveryInProgress: (recoveryId: string) =>
    new ApiError(409, 'RECOVERY_IN_PROGRESS', 'A recovery of this webhook is under way: wait for it to end, or cancel it.', { recoveryId }),
  webhookPaused: () => new ApiError(409, 'WEBHOOK_PAUSED', 'The webhook is paused: reactivate it before recovering its deliveries.'),
  methodNotAllowed: () => new ApiError(405, 'METHOD_NOT_ALLOWED', 'This route does not accept that method.'),
  webhookLimitExceeded: (limit: number) => new ApiError(409, 'WEBHOOK_LIMIT_EXCEEDED', `An account may have at most ${limit} webhooks.`),
  relayLimitExceeded: (limit: number) =>
    new ApiError(409, 'RELAY_LIMIT_EXCEEDED', `An account may have at most ${limit} relay sessions: stop a svc-webhooks listen first.`),
  relaySessionNotPausable: () =>
    new ApiError(409, 'RELAY_SESSION', 'A relay session is never paused or reactivated: stop its svc-webhooks listen instead.'),
  relaySessionWithoutCredentials: () =>
    new ApiError(409, 'RELAY_SESSION', 'A relay session delivers to your own machine: it presents no receiver credentials.'),
  notARelaySession: () => new ApiError(409, 'NOT_A_RELAY_SESSION', 'This webhook is not a relay session: it has no connection to open.'),
  writeIdReused: () => new ApiError(409, 'WRITE_ID_REUSED', 'This writeId was already used for this list with a different body.'),
  payloadTooLarge: (limitBytes: number) => new ApiError(413, 'PAYLOAD_TOO_LARGE', `The request body is larger than ${limitBytes} bytes.`),
  unsupportedMediaType: () => new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Request bodies must be JSON (Content-Type: application/json).'),
  webhookUnreachable: (reason: string, statusCode: number | null) =>
    new ApiError(422, 'WEBHOOK_UNREACHABLE', `The url did not answer the ping with a 2xx (${reason}).`, {
      reason,
      ...(statusCode === null ? {} : { statusCode }),
    }),
  tokenNotFound: () => new ApiError(404, 'TOKEN_NOT_FOUND', 'No such token.'),
  tokenLimitExceeded: (limit: number) =>
    new ApiError(409, 'TOKEN_LIMIT_EXCEEDED', `An account may have at most ${limit} tokens: revoke one first.`),
  rateLimited: (retryAfterSeconds: number, limited: 'account' | 'address') =>
    new ApiError(
      429,
      'RATE_LIMITED',
      `${limited === 'account' ? 'This account is over its rate limit' : 'Too many requests without a valid token from this address'}: ` +
        `try again in ${retryAfterSeconds} ${retryAfterSeconds === 1 ? 'second' : 'seconds'}.`,
      {},
      { 'Retry-After': String(retryAfterSeconds) },
    ),
  positionExpired: (oldestPosition: string) =>
    new ApiError(410, 'POSITION_EXPIRED', 'Items after this position are no longer kept: read on from the oldest kept.', {
      oldestPosition,
    }),
  internal: () => new ApiError(500, 'INTERNAL', 'Something went wrong on our side.'),
  unavailable: () => new ApiError(503, 'UNAVAILABLE', 'A backing service is unreachable; try again shortly.', {}, { 'Retry-After': '5' }),
  /** `brokers`: which, as operators know them (BROKER_LABELS of src/intake/messages.ts). */
  brokersUnreachable: (brokers: string) =>
    new ApiError(
      503,
      'UNAVAILABLE',
      `A broker this process consumes list writes from is unreachable: ${brokers}.`,
      {},
      { 'Retry-After': '5' },
    ),
};

/** An error's answer: its status, its own headers and Content-Type, and the envelope as JSON text. */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The contract's envelope of an error: what the API answers, and what a broker's dead-letter holds beside the message. */
export function errorEnvelopeOf(error: ApiError): ErrorEnvelope {
  return { error: { code: error.code, message: error.message, ...error.details } };
}

export function errorAnswer(error: ApiError): ErrorAnswer {
  return {
    status: error.status,
    headers: { ...error.headers, 'Content-Type': 'application/json; charset=utf-8' },
    body: JSON.stringify(errorEnvelopeOf(error)),
  };
}
