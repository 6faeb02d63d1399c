// What a receiver gets: the exact body (its key order is part of the contract) and the signed
// headers of docs/api.md, "Receiving webhooks", in one POST.
import type { Topic } from '../topics';
import type { HttpExchange, HttpSender, RequestCredentials } from './sender';
import { signPayload } from './signing';

export function pingPayload(webhookId: string, at: Date = new Date()): string {
  return JSON.stringify({ event: 'ping', webhookId, at: at.toISOString() });
}

/** `at` is already ISO 8601 UTC with milliseconds; every delivery of a write carries the same. */
export function eventPayload(event: Topic, listId: string, cursor: number, at: string): string {
  return JSON.stringify({ event, listId, cursor, at });
}

export interface SignedMessage {
  url: string;
  webhookId: string;
  /** The delivery log id, sent as SVC-Delivery. */
  deliveryId: string;
  event: string;
  /** The exact bytes that are signed and sent. */
  body: string;
  /** A test event an owner asked for, sent with `SVC-Test: 1`: no write made it. */
  test?: boolean;
}

/**
 * One signed POST of an event or ping, presenting the receiver's credentials when its webhook
 * has any. The exchange's request holds the signature, never the secret nor a credential.
 */
export function postSigned(
  http: HttpSender,
  message: SignedMessage,
  secret: string,
  credentials?: RequestCredentials,
): Promise<HttpExchange> {
  return http.post(
    message.url,
    message.body,
    {
      'svc-event': message.event,
      'svc-signature': signPayload(message.body, secret),
      'svc-delivery': message.deliveryId,
      'svc-webhook': message.webhookId,
      ...(message.test ? { 'svc-test': '1' } : {}),
    },
    credentials,
  );
}
