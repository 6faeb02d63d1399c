// Webhook signatures (docs/api.md, "Receiving webhooks"): `sha256=` + lowercase hex HMAC-SHA256 of the exact
// body bytes, keyed with the UTF-8 bytes of the whole secret (its `whsec_` prefix included).
// verifySignature is also the function receivers are shown in docs/api.md.
import { createHmac, timingSafeEqual } from 'node:crypto';

export function signPayload(body: string | Buffer, secret: string): string {
  return 'sha256=' + createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
}

export function verifySignature(rawBody: string | Buffer, header: string | undefined, secret: string): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(signPayload(rawBody, secret), 'utf8');
  const received = Buffer.from(header, 'utf8');
  // timingSafeEqual throws on different lengths; the length of a valid signature is public.
  return received.length === expected.length && timingSafeEqual(received, expected);
}
