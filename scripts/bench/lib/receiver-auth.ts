// BENCH_RECEIVER_AUTH: the credential the fan-out scenarios' webhooks carry, and the receivers
// require (receivers.ts), to measure what presenting it costs a delivery.

export type ReceiverAuthMode = 'none' | 'headers' | 'oauth2';

/** A webhook's `auth`, as POST /v3/webhooks takes it (docs/api.md). */
export type WebhookAuth =
  { type: 'headers'; headers: Record<string, string> } | { type: 'oauth2'; tokenUrl: string; clientId: string; clientSecret: string };

/** Receivers require the credential only under this path: the other scenarios' webhooks carry none. */
export const AUTHED_PATH = '/authed/';

/** The header a `headers` webhook carries. */
export const API_KEY_HEADER = 'X-Api-Key';

/** The token endpoint's path on its server. */
export const TOKEN_PATH = '/oauth/token';

/** How long the endpoint's tokens last (`expires_in`): longer than any run, so each webhook's token is fetched once. */
export const TOKEN_LIFETIME_S = 3600;

export function receiverAuthAsked(): ReceiverAuthMode {
  const value = process.env.BENCH_RECEIVER_AUTH ?? 'none';
  if (value !== 'none' && value !== 'headers' && value !== 'oauth2')
    throw new Error(`BENCH_RECEIVER_AUTH=${value}: none, headers or oauth2`);
  return value;
}
