// The dashboard's one way out: the public /v3 API, with the signed-in account's token.
// The token lives in sessionStorage only: never in a URL, a cookie or localStorage.
import type { ApiSchemas, operations } from '../../client';
import type { Scope } from '../../scopes';
import type { Topic } from '../../topics';

// The API's objects, as the typed client has them: the types generated from the OpenAPI
// document, so each shape is defined once. The views take them from here, with the API itself.
export type Webhook = ApiSchemas['Webhook'];
export type WebhookStatus = Webhook['status'];
export type CreatedWebhook = ApiSchemas['CreatedWebhook'];
export type WebhookHealth = Webhook['health'];
/** What authenticates every request to the receiver, and its client certificate, as answered: no credential. */
export type ReceiverAuthView = Webhook['auth'];
export type ClientCertificateView = Webhook['clientCertificate'];
/** The same as set: with the credentials. */
export type ReceiverAuth = NonNullable<ApiSchemas['UpdateWebhookBody']['auth']>;
export type ClientCertificate = NonNullable<ApiSchemas['UpdateWebhookBody']['clientCertificate']>;
export type WebhookHealthHours = ApiSchemas['WebhookHealthHours'];
export type HealthHour = WebhookHealthHours['hours'][number];
export type DeliveryResult = ApiSchemas['PingResult'];
export type TestEventResult = ApiSchemas['TestEventResult'];
export type RedeliveryResult = ApiSchemas['RedeliveryResult'];
export type DeliveryPage = ApiSchemas['DeliveryPage'];
export type DeliveryLogEntry = DeliveryPage['data'][number];
export type DeliveryDetail = ApiSchemas['DeliveryDetail'];
export type DeliveryLogFilters = Pick<NonNullable<operations['listDeliveries']['parameters']['query']>, 'outcome' | 'kind' | 'event'>;
export type Account = ApiSchemas['Account'];
export type Notice = ApiSchemas['Notice'];
export type NoticePage = ApiSchemas['NoticePage'];
export type ApiToken = ApiSchemas['ApiToken'];
export type CreatedApiToken = ApiSchemas['CreatedApiToken'];
export type UsageDay = ApiSchemas['Usage']['data'][number];
export type Recovery = ApiSchemas['Recovery'];
export type AuditEntry = ApiSchemas['AuditEntry'];
export type AuditAction = AuditEntry['action'];
export type AuditLogPage = ApiSchemas['AuditLogPage'];
/** Every error the API answers: its envelope, as a 400 of any route documents it. */
type ErrorEnvelope = operations['registerWebhook']['responses'][400]['content']['application/json'];
type ValidationIssue = NonNullable<ErrorEnvelope['error']['details']>[number];
export type { Scope, Topic };
export interface Subscription {
  events: Topic[];
  listIds: string[];
}
/** The receiver's credentials a registration or change sets: absent keeps them, null removes them. */
export interface Credentials {
  auth?: ReceiverAuth | null;
  clientCertificate?: ClientCertificate | null;
}

/** An error the API answered, in its envelope; `field` names the input that caused it, if one did. */
export class ApiRequestError extends Error {
  readonly field: string | undefined;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ValidationIssue[] = [],
  ) {
    super(message);
    this.field = fieldOf(code, details);
  }

  /** The API's message, with what the schema check said when it says more. */
  get text(): string {
    const [detail] = this.details;
    return detail ? `${this.message} ${detail.path.replace(/^\//, '')}: ${detail.message}.` : this.message;
  }
}

function fieldOf(code: string, details: ValidationIssue[]): string | undefined {
  if (code === 'VALIDATION_FAILED') return details[0]?.path.split('/')[1] || undefined;
  if (code === 'URL_NOT_ALLOWED' || code === 'WEBHOOK_UNREACHABLE') return 'url';
  if (code === 'INVALID_LIST_IDS') return 'listIds';
  return undefined;
}

const TOKEN_KEY = 'svc-webhooks.token';

export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  signIn: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  signOut: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** The public API as the signed-in account; `onUnauthorized` runs when the API answers 401. */
export function createApi(token: string, onUnauthorized: () => void) {
  async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`/v3${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch {
      throw new ApiRequestError(0, 'NETWORK', 'The service could not be reached. Check the connection and try again.');
    }
    if (response.status === 204) return undefined as T;
    const payload = (await response.json().catch(() => null)) as Partial<ErrorEnvelope> | null;
    if (response.ok) return payload as T;
    if (response.status === 401) onUnauthorized();
    const error = payload?.error;
    throw new ApiRequestError(
      response.status,
      error?.code ?? 'UNKNOWN',
      error?.message ?? `The service answered ${response.status}.`,
      error?.details,
    );
  }

  const webhook = (id: string) => `/webhooks/${encodeURIComponent(id)}`;
  return {
    listWebhooks: async () => (await request<{ data: Webhook[] }>('GET', '/webhooks')).data,
    getWebhook: (id: string) => request<Webhook>('GET', webhook(id)),
    registerWebhook: (body: Subscription & Credentials & { url: string }) => request<Webhook | CreatedWebhook>('POST', '/webhooks', body),
    updateWebhook: (id: string, body: Partial<Subscription> & Credentials & { status?: WebhookStatus }) =>
      request<Webhook>('PATCH', webhook(id), body),
    deleteWebhook: (id: string) => request<undefined>('DELETE', webhook(id)),
    getWebhookHealth: (id: string) => request<WebhookHealthHours>('GET', `${webhook(id)}/health`),
    ping: (id: string) => request<DeliveryResult>('POST', `${webhook(id)}/pings`),
    sendTestEvent: (id: string, event: Topic) => request<TestEventResult>('POST', `${webhook(id)}/test-events`, { event }),
    rotateSecret: (id: string, secret?: string) =>
      request<{ secret: string }>('POST', `${webhook(id)}/secret`, secret ? { secret } : undefined),
    listDeliveries: (id: string, filters: DeliveryLogFilters, before: string | null, limit?: number) =>
      request<DeliveryPage>('GET', `${webhook(id)}/deliveries?${queryOf({ ...filters, before, limit })}`),
    getDelivery: (id: string, deliveryId: string) =>
      request<DeliveryDetail>('GET', `${webhook(id)}/deliveries/${encodeURIComponent(deliveryId)}`),
    redeliver: (id: string, deliveryId: string) =>
      request<RedeliveryResult>('POST', `${webhook(id)}/deliveries/${encodeURIComponent(deliveryId)}/redeliveries`),
    getAccount: () => request<Account>('GET', '/account'),
    setNotificationEmail: (notificationEmail: string | null) => request<Account>('PATCH', '/account', { notificationEmail }),
    listNotices: (page: { webhookId?: string; before?: string | null; limit?: number }) =>
      request<NoticePage>('GET', `/account/notices?${queryOf(page)}`),
    /** The token the tab is signed in with: what it may do. */
    currentToken: () => request<ApiToken>('GET', '/account/token'),
    listTokens: async () => (await request<{ data: ApiToken[] }>('GET', '/account/tokens')).data,
    createToken: (body: { name: string; expiresAt?: string; scopes: Scope[] }) => request<CreatedApiToken>('POST', '/account/tokens', body),
    revokeToken: (id: string) => request<undefined>('DELETE', `/account/tokens/${encodeURIComponent(id)}`),
    listAuditLog: (page: { action?: AuditAction | null; before?: string | null; limit?: number }) =>
      request<AuditLogPage>('GET', `/account/audit-log?${queryOf(page)}`),
    usage: async () => (await request<{ data: UsageDay[] }>('GET', '/account/usage')).data,
    listRecoveries: async (id: string) => (await request<{ data: Recovery[] }>('GET', `${webhook(id)}/recoveries`)).data,
    getRecovery: (id: string, recoveryId: string) =>
      request<Recovery>('GET', `${webhook(id)}/recoveries/${encodeURIComponent(recoveryId)}`),
    startRecovery: (id: string, since: string) => request<Recovery>('POST', `${webhook(id)}/recoveries`, { since }),
    cancelRecovery: (id: string, recoveryId: string) =>
      request<Recovery>('DELETE', `${webhook(id)}/recoveries/${encodeURIComponent(recoveryId)}`),
  };
}

export type Api = ReturnType<typeof createApi>;

/** A query string of the parameters that have a value. */
function queryOf(parameters: Record<string, string | number | null | undefined>): URLSearchParams {
  return new URLSearchParams(
    Object.entries(parameters).flatMap(([name, value]) =>
      value === null || value === undefined || value === '' ? [] : [[name, String(value)]],
    ),
  );
}
