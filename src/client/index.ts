// The typed client of the public API (package export `svc-webhooks/client`): openapi-fetch over
// the types generated from the OpenAPI document (generated/api-types.ts), so every path, body and answer
// is checked by the compiler against what the service serves.
import createFetchClient from 'openapi-fetch';
import type { components, paths } from './generated/api-types';

export type { components, operations, paths } from './generated/api-types';
/** The API's objects by their names in the OpenAPI document: `ApiSchemas['Webhook']`. */
export type ApiSchemas = components['schemas'];

export interface ApiClientOptions {
  /** Where the service is, such as http://localhost:3000. */
  apiUrl: string;
  /** An API token of the account; without it only the unauthenticated routes answer. */
  token?: string;
  /** Another fetch, such as one that logs; the global one by default. */
  fetch?: typeof globalThis.fetch;
}

/** A client of the public API: `client.GET('/v3/webhooks/{id}', { params: { path: { id } } })`. */
export function createApiClient({ apiUrl, token, fetch }: ApiClientOptions) {
  return createFetchClient<paths>({
    baseUrl: apiUrl.replace(/\/+$/, ''),
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    ...(fetch ? { fetch } : {}),
  });
}

export type ApiClient = ReturnType<typeof createApiClient>;
