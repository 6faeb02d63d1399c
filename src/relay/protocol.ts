// The relay's messages: over PostgreSQL between the worker that delivers and the API process
// that holds the session's connection, and over that WebSocket connection between the API
// process and `svc-webhooks listen` (docs/receiving.md, "How the relay works"). JSON text, one
// message a frame or a notification.
import type { FromSchema } from 'json-schema-to-ts';

/** The PostgreSQL channel a connection's deliveries are notified on. */
export function connectionChannel(key: number): string {
  return `relay_${key}`;
}

/** Worker → API process (NOTIFY on the connection's channel): one delivery to hand over. */
export interface RelayNotification {
  id: string;
  /** The channel the worker waits on for the answer's id. */
  answerTo: string;
  headers: Record<string, string>;
  body: string;
}

/** API process → command line. */
export type ServiceMessage =
  /** The session is this connection's: deliveries come from now on. */
  | { type: 'ready'; webhookId: string }
  /** One delivery to POST to the local server, headers and body as they are. */
  | { type: 'request'; id: string; headers: Record<string, string>; body: string };

const answerCommon = { type: { const: 'answer' }, id: { type: 'string', maxLength: 64 } } as const;

/** Command line → API process: what the local server answered to a request, or why it did not. */
export const relayAnswerMessage = {
  anyOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'id', 'statusCode', 'headers', 'body', 'bodyTruncated'],
      properties: {
        ...answerCommon,
        statusCode: { type: 'integer', minimum: 100, maximum: 599 },
        headers: { type: 'object', additionalProperties: { type: 'string' } },
        body: { type: 'string' },
        bodyTruncated: { type: 'boolean' },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'id', 'error'],
      // The local server gave no answer: unreachable, too slow, or its TLS refused.
      properties: { ...answerCommon, error: { enum: ['connection', 'timeout', 'tls'] } },
    },
  ],
} as const;
export type RelayAnswerMessage = FromSchema<typeof relayAnswerMessage>;

/** API process → worker (the row of relay_answers): an answer as the delivery log keeps it. */
export type RelayAnswer =
  | { statusCode: number; headers: Record<string, string>; body: string; bodyTruncated: boolean }
  | { error: 'connection' | 'timeout' | 'tls' | 'relay_disconnected' };

/** WebSocket close codes the service uses, beside the standard ones. */
export const CLOSE = {
  /** The session was deleted (its owner deleted it, or it stayed closed too long). */
  sessionGone: 4404,
  /** A newer connection of the session took it over. */
  replaced: 4409,
} as const;
