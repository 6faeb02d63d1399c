// The service's limits: enforced by the body parser, the JSON schemas and the registration,
// and stated by the OpenAPI document, all from here; and the form of the rate limits, which
// the configuration reads and the API enforces.
/** Webhooks one account may register. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 5;
/** Relay sessions (`svc-webhooks listen`) one account may have at once; they do not count against its webhooks. */
export const MAX_RELAY_SESSIONS_PER_ACCOUNT = 2;
/** API tokens one account may have. */
export const MAX_TOKENS_PER_ACCOUNT = 10;
/** UTC days the fair-use meter answers with, today included. */
export const USAGE_DAYS = 30;
/** UTC hours a webhook's health sums and answers with, the current one included. */
export const HEALTH_HOURS = 24;
/** Lists one webhook may be restricted to. */
export const MAX_LIST_IDS = 50;
/** Headers a webhook's `auth` of type `headers` may send (DESIGN §19). */
export const MAX_AUTH_HEADERS = 10;
export const PUBLIC_BODY_LIMIT_BYTES = 64 * 1024;
export const INTERNAL_BODY_LIMIT_BYTES = 1024 * 1024;
/** Members a list may name (internal API). */
export const MAX_LIST_MEMBERS = 1000;
/** Changes one reported write may hold (internal API). */
export const MAX_CHANGES_PER_WRITE = 1000;
/** Recoveries GET /v3/webhooks/{id}/recoveries answers: the newest. */
export const RECOVERIES_LISTED = 100;

/** A bucket of `burst` requests that refills at `perSecond` on average. */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

/** The public API's rate limits (configured: RATE_LIMIT_*). */
export interface RateLimits {
  /** Each account's, across all API processes. */
  account: RateLimit;
  /** Each client address's, for requests without a valid token. */
  address: RateLimit;
  /** Requests of one account each API process works on at once; the rest wait their turn (src/api/account-turns.ts). */
  accountInFlight: number;
}

/** A byte count as a person reads it: 65536 → "64 KiB", 1048576 → "1 MiB". */
export function byteSize(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
