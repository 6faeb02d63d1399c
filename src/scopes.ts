// What an account's token may do: its scopes, and which scopes each public route needs (the
// table of docs/api.md, "Scopes"). The API enforces the table in one middleware
// (src/api/route-scopes.ts), the OpenAPI document names each operation's scopes from it, and the
// dashboard reads it to offer a token only what it may do.
export const SCOPES = ['webhooks:read', 'webhooks:write', 'deliveries:read', 'deliveries:write', 'account:read', 'account:admin'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * The scopes each public route needs, every one of them, keyed by method and path as the
 * OpenAPI document writes them. A route needing none (the token's own row) still needs a
 * valid token. A route missing here is refused to every token.
 */
export const ROUTE_SCOPES = {
  'GET /v3/webhooks': ['webhooks:read'],
  'GET /v3/webhooks/{id}': ['webhooks:read'],
  'GET /v3/webhooks/{id}/health': ['webhooks:read'],
  'POST /v3/webhooks': ['webhooks:write'],
  'PATCH /v3/webhooks/{id}': ['webhooks:write'],
  'DELETE /v3/webhooks/{id}': ['webhooks:write'],
  'POST /v3/webhooks/{id}/secret': ['webhooks:write'],
  'POST /v3/webhooks/{id}/pings': ['webhooks:write'],
  'POST /v3/webhooks/{id}/test-events': ['webhooks:write'],
  'GET /v3/webhooks/{id}/deliveries': ['deliveries:read'],
  'GET /v3/webhooks/{id}/deliveries/{deliveryId}': ['deliveries:read'],
  'GET /v3/webhooks/{id}/events': ['deliveries:read'],
  'GET /v3/webhooks/{id}/recoveries': ['deliveries:read'],
  'GET /v3/webhooks/{id}/recoveries/{recoveryId}': ['deliveries:read'],
  'POST /v3/webhooks/{id}/deliveries/{deliveryId}/redeliveries': ['deliveries:write'],
  'POST /v3/webhooks/{id}/recoveries': ['deliveries:write'],
  'DELETE /v3/webhooks/{id}/recoveries/{recoveryId}': ['deliveries:write'],
  // A relay session registers a webhook and hands its deliveries to the caller.
  'POST /v3/relay-sessions': ['webhooks:write', 'deliveries:read'],
  'POST /v3/webhooks/{id}/relay-connections': ['webhooks:write', 'deliveries:read'],
  'GET /v3/account': ['account:read'],
  'GET /v3/account/usage': ['account:read'],
  'GET /v3/account/notices': ['account:read'],
  'PATCH /v3/account': ['account:admin'],
  'GET /v3/account/tokens': ['account:admin'],
  'POST /v3/account/tokens': ['account:admin'],
  'DELETE /v3/account/tokens/{tokenId}': ['account:admin'],
  'GET /v3/account/audit-log': ['account:admin'],
  // What the calling token may do, which any token may learn (the dashboard asks it first).
  'GET /v3/account/token': [],
} as const satisfies Record<string, readonly Scope[]>;
export type Route = keyof typeof ROUTE_SCOPES;

/** The scopes a route needs ("GET /v3/webhooks/{id}"), or undefined for a route the table does not name. */
export function scopesOf(route: string): readonly Scope[] | undefined {
  return Object.hasOwn(ROUTE_SCOPES, route) ? ROUTE_SCOPES[route as Route] : undefined;
}

/** The first of `wanted` that `held` lacks, or null when it holds them all. */
export function lackingScope(held: readonly Scope[], wanted: readonly Scope[]): Scope | null {
  return wanted.find((scope) => !held.includes(scope)) ?? null;
}

/** The scopes, in the order of SCOPES: how a token's are stored and shown, whatever the order asked. */
export const inScopeOrder = (scopes: readonly Scope[]): Scope[] => SCOPES.filter((scope) => scopes.includes(scope));
