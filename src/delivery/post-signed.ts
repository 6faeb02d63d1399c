import type { HttpExchange, HttpSender } from './sender';
import { signPayload } from './signing';

export interface SignedMessage {
  url: string;
  webhookId: string;
  /** The delivery log id, sent as SVC-Delivery. */
  deliveryId: string;
  event: string;
  /** The exact bytes that are signed and sent. */
  body: string;
}

/**
 * One signed POST of an event or ping, with the headers of docs/api.md, "Receiving webhooks".
 * The exchange's request holds the signature, never the secret.
 */
export function postSigned(http: HttpSender, message: SignedMessage, secret: string): Promise<HttpExchange> {
  return http.post(message.url, message.body, {
    'svc-event': message.event,
    'svc-signature': signPayload(message.body, secret),
    'svc-delivery': message.deliveryId,
    'svc-webhook': message.webhookId,
  });
}
