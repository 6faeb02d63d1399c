// The API driven over HTTP as a client would drive it, every answer checked against the
// OpenAPI document the service serves: the status must be documented for the operation
// (500 may fall under `default`), the body must match the documented schema, documented
// headers must be there, and an error's code must be one the response lists. The last
// test asserts that every documented (operation, status) pair, and every error code each
// error response lists, was seen at least once: a route or status added to the document
// fails this file until a test here covers it.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountAccess } from '../../src/api/account-access';
import { errorEnvelope } from '../../src/objects';
import { SCOPES } from '../../src/scopes';
import { createSql } from '../../src/db/sql';
import { startResettingServer, type DeadServer } from '../support/dead-server';
import type { Receiver } from '../support/receiver';
import { requestTo, startTestStack, type ApiResponse, type RequestOptions, type TestStack } from '../support/stack';
import { waitFor } from '../support/wait';
import { issueClientCert } from '../../scripts/lib/tls';
import {
  HTTP_METHODS,
  OpenApi,
  escapePointer,
  type DocumentedOperation,
  type Operation,
  type OpenApiDocument,
  type Schema,
} from '../support/openapi';

const DOCUMENT_ID = 'https://contract.test/openapi.json';
const PUBLIC_BODY_LIMIT = 64 * 1024;
const INTERNAL_BODY_LIMIT = 1024 * 1024;

/** Request bodies the sample generator cannot make valid, by operationId. */
const SAMPLE_BODIES: Record<string, unknown> = {
  createRecovery: { since: '2026-01-01T00:00:00.000Z' },
  updateAccount: { notificationEmail: 'contract@example.com' },
};

let stack: TestStack;
let receiver: Receiver;
const failingPaths = new Set<string>();
/** Requests to these paths are answered (200) once their promise settles. */
const heldPaths = new Map<string, Promise<void>>();
let openApi: OpenApi;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const validators = new Map<string, ValidateFunction>();
const validateEnvelope = ajv.compile(errorEnvelope);
/** `${operationId} ${status}` → error codes seen ('' for a response without one). */
const observed = new Map<string, Set<string>>();

// ---- the document ----

/** A validator for the schema at `pointer` in the document; `$ref`s resolve within the document. */
function validatorAt(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer.split('/').map(encodeURIComponent).join('/')}` });
    validators.set(pointer, validate);
  }
  return validate;
}

function loadDocument(document: OpenApiDocument): void {
  openApi = new OpenApi(document);
  ajv.addSchema(document, DOCUMENT_ID);
}

// ---- the checker ----

/**
 * Asserts that a response is what the document says `method path` may answer, records
 * the (operation, status, code) it saw, and returns the operation.
 */
function check(method: string, url: string, response: ApiResponse): DocumentedOperation {
  const path = new URL(url, 'http://contract.test').pathname;
  const found = openApi.find(method, path);
  if (!found) throw new Error(`${method} ${path} is not documented`);
  const { operation } = found;
  const status = String(response.status);
  const key = operation.responses[status] ? status : response.status === 500 && operation.responses.default ? 'default' : undefined;
  const where = `${operation.operationId} (${method} ${path}) ${status}`;
  if (!key) throw new Error(`${where} is not documented: ${JSON.stringify(response.body)}`);
  const documented = operation.responses[key];
  const responsePointer = `${found.pointer}/responses/${key}`;

  const [mediaType] = Object.keys(documented.content ?? {});
  if (mediaType) {
    expect(response.headers.get('content-type'), where).toMatch(new RegExp(`^${mediaType.replace('/', '\\/')}\\b`));
    const validate = validatorAt(`${responsePointer}/content/${escapePointer(mediaType)}/schema`);
    if (!validate(response.body)) {
      throw new Error(
        `${where}: the body does not match the document: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(response.body)}`,
      );
    }
  } else {
    expect(response.body, `${where} documents no body`).toBeUndefined();
  }

  for (const [name, header] of Object.entries(documented.headers ?? {})) {
    const value = response.headers.get(name);
    expect(value, `${where} sends ${name}`).not.toBeNull();
    if (!header.schema) continue;
    const type = openApi.deref(header.schema)?.type;
    const typed = (type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value!) ? Number(value) : value;
    const validate = validatorAt(`${responsePointer}/headers/${escapePointer(name)}/schema`);
    expect(validate(typed), `${where} header ${name}: ${value}`).toBe(true);
  }

  let code = '';
  if (response.status >= 400) {
    code = response.body.error.code;
    expect(openApi.codes(documented), `${where} lists ${code}`).toContain(code);
  }
  const seen = observed.get(`${operation.operationId} ${key}`) ?? new Set<string>();
  seen.add(code);
  observed.set(`${operation.operationId} ${key}`, seen);
  return found;
}

/** Like stack.request, against any base URL. */
const send = (baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> =>
  requestTo(baseUrl)(method, path, options);

/** A request to the service, checked against the document. */
async function call(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
  const response = await send(stack.service.url, method, path, options);
  check(method, path, response);
  return response;
}

// ---- requests built from the document ----

const internalToken = () => ({ token: stack.internalApiToken });

/** A token the operation's security scheme accepts (for the public API, a fresh account's). */
async function tokenFor(operation: Operation): Promise<string | null> {
  const schemes = openApi.securitySchemes(operation);
  if (schemes.length === 0) return null;
  if (schemes.includes('internalToken')) return stack.internalApiToken;
  if (schemes.includes('accountToken')) return (await stack.createAccount()).token;
  throw new Error(`${operation.operationId}: no token for security ${schemes.join(', ')}`);
}

/** A concrete path for a template; the values match the id pattern and name nothing that exists. */
const samplePath = (template: string) => template.replace(/\{([^}]+)\}/g, (_, name: string) => `contract-${name}`);

const bodyLimit = (template: string) => (template.startsWith('/internal/') ? INTERNAL_BODY_LIMIT : PUBLIC_BODY_LIMIT);

/** A small valid instance of a (dereferenced) JSON schema, for requests that must pass validation. */
function sampleOf(node: Schema): unknown {
  const schema = openApi.deref(node)!;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      // The required properties, then optional ones until minProperties is met.
      const names = [...((schema.required as string[] | undefined) ?? [])];
      for (const name of Object.keys(schema.properties ?? {}))
        if (names.length < (schema.minProperties ?? 0) && !names.includes(name)) names.push(name);
      return Object.fromEntries(names.map((name) => [name, sampleOf(schema.properties[name])]));
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sampleOf(schema.items));
    case 'string':
      return schema.format === 'date-time' ? new Date().toISOString() : 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? 0;
    case 'boolean':
      return true;
    default:
      return null;
  }
}

/** A body that passes the operation's request schema. */
function validBody(found: DocumentedOperation): unknown {
  const { operation } = found;
  const body = SAMPLE_BODIES[operation.operationId] ?? sampleOf(operation.requestBody!.content['application/json'].schema);
  const validate = validatorAt(`${found.pointer}/requestBody/content/${escapePointer('application/json')}/schema`);
  if (!validate(body)) throw new Error(`${operation.operationId}: add a valid body to SAMPLE_BODIES (${ajv.errorsText(validate.errors)})`);
  return body;
}

/** Operations of the document that have a request body / need a token / document this status. */
const withRequestBody = () => openApi.operations.filter(({ operation }) => operation.requestBody);
const documenting = (status: string) => openApi.operations.filter(({ operation }) => operation.responses[status]);

function expectError(response: ApiResponse, status: number, code: string): Record<string, unknown> {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error.code).toBe(code);
  expect(typeof response.body.error.message).toBe('string');
  return response.body.error;
}

// ---- the stack ----

beforeAll(async () => {
  // Probes a second after a pause, so that a paused webhook's probes and notice are seen here.
  stack = await startTestStack({ PROBE_INTERVALS: '1s' });
  receiver = await stack.startReceiver();
  // A receiver under /unreachable answers every ping with 500, and so does a path in failingPaths; others get 200.
  receiver.respondWith(async (request) => {
    await heldPaths.get(request.path);
    return { status: request.path.startsWith('/unreachable') || failingPaths.has(request.path) ? 500 : 200 };
  });
  const response = await send(stack.service.url, 'GET', '/v3/openapi.json');
  expect(response.status).toBe(200);
  loadDocument(response.body);
  // The document's own answer is checked like any other.
  check('GET', '/v3/openapi.json', response);
});
afterAll(() => stack?.stop());

/** A fresh account with a fresh webhook on the receiver. */
async function accountWithWebhook(path: string) {
  const account = await stack.createAccount();
  const created = await call('POST', '/v3/webhooks', { token: account.token, body: { url: receiver.urlFor(path) } });
  expect(created.status).toBe(201);
  return { account, token: account.token, webhook: created.body as { id: string; url: string; secret: string } };
}

// ---- routes without a token ----

describe('open routes', () => {
  it('serve the document, health and readiness without a token', async () => {
    const document = await call('GET', '/v3/openapi.json');
    expect(document.status).toBe(200);
    expect(document.body.openapi).toMatch(/^3\.1\./);
    expect(await call('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await call('GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } });
    const metrics = await call('GET', '/metrics');
    expect(metrics.body).toMatch(/^# HELP /m);
  });
});

// ---- internal API ----

describe('POST /internal/v3/accounts', () => {
  it('answers 201 with the account id and its token, which the public API then accepts', async () => {
    const created = await call('POST', '/internal/v3/accounts', { ...internalToken(), body: { name: 'Contract' } });
    expect(created.status).toBe(201);
    const listed = await call('GET', '/v3/webhooks', { token: created.body.token });
    expect(listed).toMatchObject({ status: 200, body: { data: [] } });
  });

  it('answers 400 VALIDATION_FAILED with details and 400 MALFORMED_JSON', async () => {
    const invalid = await call('POST', '/internal/v3/accounts', { ...internalToken(), body: { name: '', extra: 1 } });
    const error = expectError(invalid, 400, 'VALIDATION_FAILED');
    expect(error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: expect.stringMatching(/^\/(name|extra)$/) })]));
    const malformed = await call('POST', '/internal/v3/accounts', {
      ...internalToken(),
      rawBody: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 400, 'MALFORMED_JSON');
  });
});

describe('PUT and DELETE /internal/v3/lists/{listId}', () => {
  it('creates a list (201), replaces it (200), deletes it (204), then answers 404 LIST_NOT_FOUND', async () => {
    const [owner, member] = [await stack.createAccount(), await stack.createAccount()];
    const created = await call('PUT', '/internal/v3/lists/contract-list-1', { ...internalToken(), body: { ownerAccountId: owner.id } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: 'contract-list-1', ownerAccountId: owner.id, memberAccountIds: [], cursor: 0 });
    const replaced = await call('PUT', '/internal/v3/lists/contract-list-1', {
      ...internalToken(),
      body: { ownerAccountId: owner.id, memberAccountIds: [member.id] },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.memberAccountIds).toEqual([member.id]);

    expect((await call('DELETE', '/internal/v3/lists/contract-list-1', internalToken())).status).toBe(204);
    expectError(await call('DELETE', '/internal/v3/lists/contract-list-1', internalToken()), 404, 'LIST_NOT_FOUND');
  });

  it('answers 400 VALIDATION_FAILED for a bad body, an unknown account or a bad list id, and 400 MALFORMED_JSON', async () => {
    const owner = await stack.createAccount();
    const badBody = await call('PUT', '/internal/v3/lists/contract-list-2', {
      ...internalToken(),
      body: { ownerAccountId: owner.id, members: [] },
    });
    expect(expectError(badBody, 400, 'VALIDATION_FAILED').details).toEqual([{ path: '/members', message: expect.any(String) }]);

    const unknownOwner = await call('PUT', '/internal/v3/lists/contract-list-2', {
      ...internalToken(),
      body: { ownerAccountId: 'acc_nobody' },
    });
    expect(expectError(unknownOwner, 400, 'VALIDATION_FAILED').details).toEqual([{ path: '/ownerAccountId', message: expect.any(String) }]);

    const badPutId = await call('PUT', '/internal/v3/lists/bad%20id', { ...internalToken(), body: { ownerAccountId: owner.id } });
    expect(expectError(badPutId, 400, 'VALIDATION_FAILED').details).toEqual([{ path: '/params/listId', message: expect.any(String) }]);
    const badDeleteId = await call('DELETE', '/internal/v3/lists/bad%20id', internalToken());
    expect(expectError(badDeleteId, 400, 'VALIDATION_FAILED').details).toEqual([{ path: '/params/listId', message: expect.any(String) }]);

    const malformed = await call('PUT', '/internal/v3/lists/contract-list-2', {
      ...internalToken(),
      rawBody: '{"ownerAccountId": }',
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 400, 'MALFORMED_JSON');
    // None of these created the list.
    expectError(await call('DELETE', '/internal/v3/lists/contract-list-2', internalToken()), 404, 'LIST_NOT_FOUND');
  });
});

describe('POST /internal/v3/lists/{listId}/writes', () => {
  it('answers 202, the same again for a repeat, 409 WRITE_ID_REUSED for another body, 404 LIST_NOT_FOUND and 400s', async () => {
    const owner = await stack.createAccount();
    expect(
      (await call('PUT', '/internal/v3/lists/contract-writes', { ...internalToken(), body: { ownerAccountId: owner.id } })).status,
    ).toBe(201);
    const body = { writeId: 'contract-w1', changes: [{ type: 'item.added', itemId: 'tea' }] };
    const accepted = await call('POST', '/internal/v3/lists/contract-writes/writes', { ...internalToken(), body });
    expect(accepted).toMatchObject({
      status: 202,
      body: { writeId: 'contract-w1', listId: 'contract-writes', cursor: 1, topics: ['list.changed', 'item.added'] },
    });
    const repeated = await call('POST', '/internal/v3/lists/contract-writes/writes', { ...internalToken(), body });
    expect(repeated.body).toEqual(accepted.body);

    const reused = await call('POST', '/internal/v3/lists/contract-writes/writes', {
      ...internalToken(),
      body: { writeId: 'contract-w1', changes: [{ type: 'item.removed' }] },
    });
    expectError(reused, 409, 'WRITE_ID_REUSED');
    expectError(await call('POST', '/internal/v3/lists/contract-nowhere/writes', { ...internalToken(), body }), 404, 'LIST_NOT_FOUND');

    const invalid = await call('POST', '/internal/v3/lists/contract-writes/writes', {
      ...internalToken(),
      body: { writeId: 'w2', changes: [{ type: 'member.joined' }] },
    });
    expect(expectError(invalid, 400, 'VALIDATION_FAILED').details).toEqual([{ path: '/changes/0/accountId', message: expect.any(String) }]);
    const malformed = await call('POST', '/internal/v3/lists/contract-writes/writes', {
      ...internalToken(),
      rawBody: '{"writeId"',
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 400, 'MALFORMED_JSON');
  });
});

// ---- public API ----

describe('POST /v3/webhooks', () => {
  it('answers 201 with the secret and a Location, then 200 without it for the same URL', async () => {
    const account = await stack.createAccount();
    const url = receiver.urlFor('/contract/register');
    const created = await call('POST', '/v3/webhooks', { token: account.token, body: { url } });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    expect(created.headers.get('location')).toBe(`/v3/webhooks/${created.body.id}`);

    const updated = await call('POST', '/v3/webhooks', { token: account.token, body: { url, events: ['item.added'] } });
    expect(updated.status).toBe(200);
    expect(updated.body).not.toHaveProperty('secret');
    expect(updated.body).toMatchObject({ id: created.body.id, events: ['item.added'] });
  });

  it('answers 400 VALIDATION_FAILED, MALFORMED_JSON, URL_NOT_ALLOWED and INVALID_LIST_IDS with their details, pinging nothing', async () => {
    const account = await stack.createAccount();
    const pingsBefore = receiver.requests.length;

    const unknownField = await call('POST', '/v3/webhooks', {
      token: account.token,
      body: { url: receiver.urlFor('/contract/x'), secret: 'mine' },
    });
    expect(expectError(unknownField, 400, 'VALIDATION_FAILED').details).toEqual([{ path: '/secret', message: expect.any(String) }]);

    const malformed = await call('POST', '/v3/webhooks', {
      token: account.token,
      rawBody: '{"url": "https://',
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 400, 'MALFORMED_JSON');

    const plainHttp = await call('POST', '/v3/webhooks', { token: account.token, body: { url: 'http://example.com/hook' } });
    expect(expectError(plainHttp, 400, 'URL_NOT_ALLOWED').reason).toBe('scheme');
    const withCredentials = await call('POST', '/v3/webhooks', { token: account.token, body: { url: 'https://user:pw@example.com/hook' } });
    expect(expectError(withCredentials, 400, 'URL_NOT_ALLOWED').reason).toBe('credentials');

    const other = await stack.createAccount();
    expect(
      (await call('PUT', '/internal/v3/lists/contract-theirs', { ...internalToken(), body: { ownerAccountId: other.id } })).status,
    ).toBe(201);
    const notOwned = await call('POST', '/v3/webhooks', {
      token: account.token,
      body: { url: receiver.urlFor('/contract/lists'), listIds: ['contract-theirs', 'contract-missing'] },
    });
    expect(expectError(notOwned, 400, 'INVALID_LIST_IDS').invalidListIds).toEqual(
      expect.arrayContaining(['contract-theirs', 'contract-missing']),
    );

    expect(receiver.requests.length).toBe(pingsBefore);
    expect((await call('GET', '/v3/webhooks', { token: account.token })).body.data).toEqual([]);
  });

  it('answers 409 WEBHOOK_LIMIT_EXCEEDED for a sixth webhook without pinging it', async () => {
    const account = await stack.createAccount();
    for (let i = 1; i <= 5; i++) {
      const created = await call('POST', '/v3/webhooks', { token: account.token, body: { url: receiver.urlFor(`/contract/limit/${i}`) } });
      expect(created.status).toBe(201);
    }
    const sixth = await call('POST', '/v3/webhooks', { token: account.token, body: { url: receiver.urlFor('/contract/limit/6') } });
    expectError(sixth, 409, 'WEBHOOK_LIMIT_EXCEEDED');
    expect(receiver.requests.filter((request) => request.path === '/contract/limit/6')).toEqual([]);
    expect((await call('GET', '/v3/webhooks', { token: account.token })).body.data).toHaveLength(5);
  });

  it('answers 422 WEBHOOK_UNREACHABLE with the reason and status when the receiver answers 500, storing nothing', async () => {
    const account = await stack.createAccount();
    const unreachable = await call('POST', '/v3/webhooks', {
      token: account.token,
      body: { url: receiver.urlFor('/unreachable/contract') },
    });
    const error = expectError(unreachable, 422, 'WEBHOOK_UNREACHABLE');
    expect(error).toMatchObject({ reason: 'non_2xx', statusCode: 500 });
    expect(receiver.requests.filter((request) => request.path === '/unreachable/contract')).toHaveLength(1);
    expect((await call('GET', '/v3/webhooks', { token: account.token })).body.data).toEqual([]);
  });
});

describe('GET, PATCH and DELETE /v3/webhooks/{id}', () => {
  it("lists and reads the caller's webhooks, and answers 404 for an unknown id or another account's webhook", async () => {
    const { token, webhook } = await accountWithWebhook('/contract/read');
    const listed = await call('GET', '/v3/webhooks', { token });
    expect(listed.body.data.map((entry: { id: string }) => entry.id)).toEqual([webhook.id]);
    const read = await call('GET', `/v3/webhooks/${webhook.id}`, { token });
    expect(read).toMatchObject({ status: 200, body: { id: webhook.id, url: webhook.url } });

    expectError(await call('GET', '/v3/webhooks/wh_000000000000000000000000', { token }), 404, 'WEBHOOK_NOT_FOUND');
    const stranger = await stack.createAccount();
    expectError(await call('GET', `/v3/webhooks/${webhook.id}`, { token: stranger.token }), 404, 'WEBHOOK_NOT_FOUND');
  });

  it("pauses and reactivates with PATCH (200), and answers 400 with details, 404 for another account's webhook", async () => {
    const { token, webhook } = await accountWithWebhook('/contract/patch');
    const paused = await call('PATCH', `/v3/webhooks/${webhook.id}`, { token, body: { status: 'paused' } });
    expect(paused).toMatchObject({ status: 200, body: { status: 'paused', pausedReason: 'manual' } });
    const active = await call('PATCH', `/v3/webhooks/${webhook.id}`, { token, body: { status: 'active', events: ['item.checked'] } });
    expect(active).toMatchObject({
      status: 200,
      body: { status: 'active', pausedReason: null, consecutiveFailures: 0, events: ['item.checked'] },
    });

    const empty = await call('PATCH', `/v3/webhooks/${webhook.id}`, { token, body: {} });
    expect(expectError(empty, 400, 'VALIDATION_FAILED').details).toEqual([expect.objectContaining({ path: expect.any(String) })]);
    const badStatus = await call('PATCH', `/v3/webhooks/${webhook.id}`, { token, body: { status: 'deleted' } });
    expect(expectError(badStatus, 400, 'VALIDATION_FAILED').details).toEqual([{ path: '/status', message: expect.any(String) }]);
    const malformed = await call('PATCH', `/v3/webhooks/${webhook.id}`, {
      token,
      rawBody: '{',
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 400, 'MALFORMED_JSON');
    const notOwned = await call('PATCH', `/v3/webhooks/${webhook.id}`, { token, body: { listIds: ['contract-nowhere'] } });
    expect(expectError(notOwned, 400, 'INVALID_LIST_IDS').invalidListIds).toEqual(['contract-nowhere']);

    const stranger = await stack.createAccount();
    expectError(
      await call('PATCH', `/v3/webhooks/${webhook.id}`, { token: stranger.token, body: { status: 'paused' } }),
      404,
      'WEBHOOK_NOT_FOUND',
    );
    expect((await call('GET', `/v3/webhooks/${webhook.id}`, { token })).body.status).toBe('active');
  });

  it('sets receiver credentials with PATCH, answered as documented without any of them, and refuses invalid ones at their path', async () => {
    const { token, webhook } = await accountWithWebhook('/contract/credentials');
    const client = await issueClientCert(stack.ca, 'contract-sender');
    const headers = await call('PATCH', `/v3/webhooks/${webhook.id}`, {
      token,
      body: {
        auth: { type: 'headers', headers: { 'X-Api-Key': 'contract-key' } },
        clientCertificate: { certificate: client.cert, privateKey: client.key },
      },
    });
    expect(headers).toMatchObject({
      status: 200,
      body: { auth: { type: 'headers', headerNames: ['X-Api-Key'] }, clientCertificate: { subject: 'CN=contract-sender' } },
    });
    const oauth2 = await call('PATCH', `/v3/webhooks/${webhook.id}`, {
      token,
      body: {
        auth: { type: 'oauth2', tokenUrl: receiver.urlFor('/contract/token'), clientId: 'contract', clientSecret: 'contract-secret' },
      },
    });
    expect(oauth2.body.auth).toEqual({
      type: 'oauth2',
      tokenUrl: receiver.urlFor('/contract/token'),
      clientId: 'contract',
      scope: null,
      audience: null,
    });
    const listed = await call('GET', '/v3/webhooks', { token });
    expect(JSON.stringify(listed.body)).not.toMatch(/contract-key|contract-secret|PRIVATE KEY/);
    const reserved = await call('PATCH', `/v3/webhooks/${webhook.id}`, {
      token,
      body: { auth: { type: 'headers', headers: { Host: 'x' } } },
    });
    expect(expectError(reserved, 400, 'VALIDATION_FAILED').details).toEqual([{ path: '/auth/headers/Host', message: expect.any(String) }]);
    const removed = await call('PATCH', `/v3/webhooks/${webhook.id}`, { token, body: { auth: null, clientCertificate: null } });
    expect(removed.body).toMatchObject({ auth: null, clientCertificate: null });
  });

  it('deletes with 204, after which the webhook is 404 everywhere', async () => {
    const { token, webhook } = await accountWithWebhook('/contract/delete');
    const stranger = await stack.createAccount();
    expectError(await call('DELETE', `/v3/webhooks/${webhook.id}`, { token: stranger.token }), 404, 'WEBHOOK_NOT_FOUND');
    const deleted = await call('DELETE', `/v3/webhooks/${webhook.id}`, { token });
    expect(deleted.status).toBe(204);
    expectError(await call('DELETE', `/v3/webhooks/${webhook.id}`, { token }), 404, 'WEBHOOK_NOT_FOUND');
    expectError(await call('GET', `/v3/webhooks/${webhook.id}`, { token }), 404, 'WEBHOOK_NOT_FOUND');
    expect((await call('GET', '/v3/webhooks', { token })).body.data).toEqual([]);
  });
});

describe('POST /v3/webhooks/{id}/pings', () => {
  it('answers 200 with what the ping got, with no body or an empty object', async () => {
    const { token, webhook } = await accountWithWebhook('/contract/ping');
    const before = receiver.requests.filter((request) => request.path === '/contract/ping').length;
    const bare = await call('POST', `/v3/webhooks/${webhook.id}/pings`, { token });
    expect(bare.body).toMatchObject({ delivered: true, statusCode: 200, error: null });
    const withEmptyObject = await call('POST', `/v3/webhooks/${webhook.id}/pings`, { token, body: {} });
    expect(withEmptyObject).toMatchObject({ status: 200, body: { delivered: true } });
    expect(receiver.requests.filter((request) => request.path === '/contract/ping')).toHaveLength(before + 2);
  });

  it('answers 200 with the failure when the receiver does not answer 2xx, also for a paused webhook', async () => {
    const { token, webhook } = await accountWithWebhook('/contract/ping-fails');
    failingPaths.add('/contract/ping-fails');
    const failed = await call('POST', `/v3/webhooks/${webhook.id}/pings`, { token });
    expect(failed).toMatchObject({ status: 200, body: { delivered: false, statusCode: 500, error: 'non_2xx' } });
    expect((await call('PATCH', `/v3/webhooks/${webhook.id}`, { token, body: { status: 'paused' } })).status).toBe(200);
    const whilePaused = await call('POST', `/v3/webhooks/${webhook.id}/pings`, { token });
    expect(whilePaused).toMatchObject({ status: 200, body: { delivered: false, statusCode: 500 } });
    expect(receiver.requests.filter((request) => request.path === '/contract/ping-fails')).toHaveLength(3);
    // A ping never counts as a failure.
    expect((await call('GET', `/v3/webhooks/${webhook.id}`, { token })).body.consecutiveFailures).toBe(0);
  });

  it("answers 400 VALIDATION_FAILED for a non-empty body, 400 MALFORMED_JSON, and 404 for another account's webhook", async () => {
    const { token, webhook } = await accountWithWebhook('/contract/ping-errors');
    const nonEmpty = await call('POST', `/v3/webhooks/${webhook.id}/pings`, { token, body: { force: true } });
    expect(expectError(nonEmpty, 400, 'VALIDATION_FAILED').details).toEqual([
      { path: expect.stringMatching(/^\//), message: expect.any(String) },
    ]);
    const malformed = await call('POST', `/v3/webhooks/${webhook.id}/pings`, {
      token,
      rawBody: '{"',
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 400, 'MALFORMED_JSON');
    const stranger = await stack.createAccount();
    expectError(await call('POST', `/v3/webhooks/${webhook.id}/pings`, { token: stranger.token }), 404, 'WEBHOOK_NOT_FOUND');
  });
});

describe('POST /v3/webhooks/{id}/test-events', () => {
  it('answers 200 with the delivery id and what the test event got, also for a failure', async () => {
    const { token, webhook } = await accountWithWebhook('/contract/test-event');
    const sent = await call('POST', `/v3/webhooks/${webhook.id}/test-events`, { token, body: { event: 'item.checked' } });
    expect(sent.body).toMatchObject({ deliveryId: expect.stringMatching(/^dlv_/), delivered: true, statusCode: 200, error: null });
    failingPaths.add('/contract/test-event');
    const failed = await call('POST', `/v3/webhooks/${webhook.id}/test-events`, { token, body: { event: 'list.changed' } });
    expect(failed).toMatchObject({ status: 200, body: { delivered: false, statusCode: 500, error: 'non_2xx' } });
  });

  it("answers 400 VALIDATION_FAILED, MALFORMED_JSON and INVALID_LIST_IDS, and 404 for another account's webhook", async () => {
    const { token, webhook } = await accountWithWebhook('/contract/test-event-errors');
    const testEvents = `/v3/webhooks/${webhook.id}/test-events`;
    expectError(await call('POST', testEvents, { token, body: { event: 'ping' } }), 400, 'VALIDATION_FAILED');
    expectError(
      await call('POST', testEvents, { token, rawBody: '{"', headers: { 'content-type': 'application/json' } }),
      400,
      'MALFORMED_JSON',
    );
    const unknownList = await call('POST', testEvents, { token, body: { event: 'item.added', listId: 'contract-no-such-list' } });
    expect(expectError(unknownList, 400, 'INVALID_LIST_IDS').invalidListIds).toEqual(['contract-no-such-list']);
    const stranger = await stack.createAccount();
    expectError(await call('POST', testEvents, { token: stranger.token, body: { event: 'item.added' } }), 404, 'WEBHOOK_NOT_FOUND');
  });
});

describe('POST /v3/relay-sessions and POST /v3/webhooks/{id}/relay-connections', () => {
  it('answer 201 with the session and a ticket; 409 for a third session, a ticket of a webhook that is none, and a status of a session', async () => {
    const { token, webhook } = await accountWithWebhook('/contract/relay');
    const session = await call('POST', '/v3/relay-sessions', { token, body: { events: ['item.added'] } });
    expect(session.body).toMatchObject({ relay: true, url: `relay://${session.body.id}`, secret: expect.stringMatching(/^whsec_/) });
    const ticket = await call('POST', `/v3/webhooks/${session.body.id}/relay-connections`, { token });
    expect(ticket).toMatchObject({ status: 201, body: { ticket: expect.stringMatching(/^rt_/) } });
    expect((await call('POST', '/v3/relay-sessions', { token })).status).toBe(201);
    expectError(await call('POST', '/v3/relay-sessions', { token }), 409, 'RELAY_LIMIT_EXCEEDED');
    expectError(await call('POST', `/v3/webhooks/${webhook.id}/relay-connections`, { token }), 409, 'NOT_A_RELAY_SESSION');
    expectError(await call('PATCH', `/v3/webhooks/${session.body.id}`, { token, body: { status: 'paused' } }), 409, 'RELAY_SESSION');
    expectError(
      await call('PATCH', `/v3/webhooks/${session.body.id}`, { token, body: { auth: { type: 'headers', headers: { 'X-Key': 'k' } } } }),
      409,
      'RELAY_SESSION',
    );
  });

  it("answer 400 VALIDATION_FAILED, MALFORMED_JSON and INVALID_LIST_IDS, and 404 for another account's webhook", async () => {
    const owner = await stack.createAccount();
    const token = owner.token;
    const malformed = { token, rawBody: '{"', headers: { 'content-type': 'application/json' } };
    expectError(await call('POST', '/v3/relay-sessions', { token, body: { events: ['ping'] } }), 400, 'VALIDATION_FAILED');
    expectError(await call('POST', '/v3/relay-sessions', malformed), 400, 'MALFORMED_JSON');
    expectError(await call('POST', '/v3/relay-sessions', { token, body: { listIds: ['contract-not-mine'] } }), 400, 'INVALID_LIST_IDS');
    const session = await call('POST', '/v3/relay-sessions', { token });
    const connections = `/v3/webhooks/${session.body.id}/relay-connections`;
    expectError(await call('POST', connections, { token, body: { extra: 1 } }), 400, 'VALIDATION_FAILED');
    expectError(await call('POST', connections, malformed), 400, 'MALFORMED_JSON');
    const stranger = await stack.createAccount();
    expectError(await call('POST', connections, { token: stranger.token }), 404, 'WEBHOOK_NOT_FOUND');
  });
});

describe('GET /v3/webhooks/{id}/deliveries', () => {
  it("answers 200 with a page of the log, 400 for a bad query and 404 for another account's webhook", async () => {
    const { token, webhook } = await accountWithWebhook('/contract/log');
    await call('POST', `/v3/webhooks/${webhook.id}/pings`, { token });
    await call('POST', `/v3/webhooks/${webhook.id}/pings`, { token });
    const page = await call('GET', `/v3/webhooks/${webhook.id}/deliveries?limit=1`, { token });
    expect(page).toMatchObject({ status: 200, body: { data: [{ kind: 'ping', outcome: 'delivered' }] } });
    const rest = await call('GET', `/v3/webhooks/${webhook.id}/deliveries?before=${page.body.next}`, { token });
    expect(rest.body).toMatchObject({ data: [{ kind: 'ping' }], next: null });

    const badQuery = await call('GET', `/v3/webhooks/${webhook.id}/deliveries?limit=1000`, { token });
    expect(expectError(badQuery, 400, 'VALIDATION_FAILED').details).toEqual([{ path: '/query/limit', message: expect.any(String) }]);
    const stranger = await stack.createAccount();
    expectError(await call('GET', `/v3/webhooks/${webhook.id}/deliveries`, { token: stranger.token }), 404, 'WEBHOOK_NOT_FOUND');
  });
});

describe('GET /v3/webhooks/{id}/events', () => {
  it("answers 200 with a page of the feed, 400 for a bad query, 404 for another account's webhook and 410 past what is kept", async () => {
    const { account, token, webhook } = await accountWithWebhook('/contract/events');
    await stack.putList('contract-events', account.id);
    await stack.reportWrite('contract-events', 'w1');
    await stack.reportWrite('contract-events', 'w2');
    const [first, second] = await waitFor(
      async () => {
        const page = await call('GET', `/v3/webhooks/${webhook.id}/events`, { token });
        return page.body.data.length === 2 ? page.body.data : undefined;
      },
      { what: 'the two items of the feed' },
    );
    const rest = await call('GET', `/v3/webhooks/${webhook.id}/events?after=${first.position}&limit=1&wait=0`, { token });
    expect(rest).toMatchObject({ status: 200, body: { data: [{ deliveryId: second.deliveryId, cursor: 2 }], next: second.position } });

    const badQuery = await call('GET', `/v3/webhooks/${webhook.id}/events?limit=501`, { token });
    expect(expectError(badQuery, 400, 'VALIDATION_FAILED').details).toEqual([{ path: '/query/limit', message: expect.any(String) }]);
    const stranger = await stack.createAccount();
    expectError(await call('GET', `/v3/webhooks/${webhook.id}/events`, { token: stranger.token }), 404, 'WEBHOOK_NOT_FOUND');
    // Pruned as the retention job prunes: the oldest first.
    await stack.service.sql`DELETE FROM feed_items WHERE webhook_id = ${webhook.id} AND delivery_id = ${first.deliveryId}`;
    const expired = await call('GET', `/v3/webhooks/${webhook.id}/events?after=${first.position}`, { token });
    expect(expectError(expired, 410, 'POSITION_EXPIRED').oldestPosition).toBe(second.position);
  });
});

describe('GET /v3/webhooks/{id}/health', () => {
  it("answers 200 with the health and its 24 hours, and 404 for another account's webhook", async () => {
    const { account, token, webhook } = await accountWithWebhook('/contract/health');
    await stack.putList('contract-health', account.id);
    await stack.reportWrite('contract-health', 'w1');
    const health = await call('GET', `/v3/webhooks/${webhook.id}/health`, { token });
    expect(health).toMatchObject({ status: 200, body: { delivered24h: 1, failed24h: 0, skipped24h: 0, lastFailedAt: null } });
    expect(health.body.hours).toHaveLength(24);
    expect((await call('GET', `/v3/webhooks/${webhook.id}`, { token })).body.health).toMatchObject({ delivered24h: 1 });
    const stranger = await stack.createAccount();
    expectError(await call('GET', `/v3/webhooks/${webhook.id}/health`, { token: stranger.token }), 404, 'WEBHOOK_NOT_FOUND');
  });
});

describe('GET /v3/webhooks/{id}/deliveries/{deliveryId}', () => {
  it('answers 200 with the entry, what was sent and what came back; 404 DELIVERY_NOT_FOUND and WEBHOOK_NOT_FOUND', async () => {
    const { account, token, webhook } = await accountWithWebhook('/contract/detail');
    await stack.putList('contract-detail', account.id);
    // One delivered, one failed with a body, one skipped while paused: every form of the answer.
    await stack.reportWrite('contract-detail', 'w1');
    failingPaths.add('/contract/detail');
    await stack.reportWrite('contract-detail', 'w2');
    await call('PATCH', `/v3/webhooks/${webhook.id}`, { token, body: { status: 'paused' } });
    await stack.reportWrite('contract-detail', 'w3');
    const entries = (await call('GET', `/v3/webhooks/${webhook.id}/deliveries`, { token })).body.data;
    expect(entries.map((entry: { outcome: string }) => entry.outcome)).toEqual(['skipped', 'failed', 'delivered']);
    for (const entry of entries) {
      const detail = await call('GET', `/v3/webhooks/${webhook.id}/deliveries/${entry.id}`, { token });
      expect(detail.status).toBe(200);
      expect(detail.body).toMatchObject(entry);
    }

    for (const unknown of ['dlv_000000000000000000000000', 'nope'])
      expectError(await call('GET', `/v3/webhooks/${webhook.id}/deliveries/${unknown}`, { token }), 404, 'DELIVERY_NOT_FOUND');
    const other = await call('POST', '/v3/webhooks', { token, body: { url: receiver.urlFor('/contract/detail-other') } });
    expectError(await call('GET', `/v3/webhooks/${other.body.id}/deliveries/${entries[0].id}`, { token }), 404, 'DELIVERY_NOT_FOUND');
    const stranger = await stack.createAccount();
    expectError(
      await call('GET', `/v3/webhooks/${webhook.id}/deliveries/${entries[0].id}`, { token: stranger.token }),
      404,
      'WEBHOOK_NOT_FOUND',
    );
  });
});

describe('POST /v3/webhooks/{id}/deliveries/{deliveryId}/redeliveries', () => {
  it('answers 200 with the new delivery id and what it got, with no body or an empty object', async () => {
    const { account, token, webhook } = await accountWithWebhook('/contract/redeliver');
    await stack.putList('contract-redeliver', account.id);
    await stack.reportWrite('contract-redeliver', 'w1');
    const [logged] = (await call('GET', `/v3/webhooks/${webhook.id}/deliveries?kind=event`, { token })).body.data;
    const bare = await call('POST', `/v3/webhooks/${webhook.id}/deliveries/${logged.id}/redeliveries`, { token });
    expect(bare.body).toMatchObject({ deliveryId: expect.not.stringMatching(logged.id), delivered: true, statusCode: 200, error: null });
    const withEmptyObject = await call('POST', `/v3/webhooks/${webhook.id}/deliveries/${bare.body.deliveryId}/redeliveries`, {
      token,
      body: {},
    });
    expect(withEmptyObject).toMatchObject({ status: 200, body: { delivered: true } });
  });

  it('answers 409 NOT_REDELIVERABLE for a ping, 404 DELIVERY_NOT_FOUND and WEBHOOK_NOT_FOUND, and 400s', async () => {
    const { token, webhook } = await accountWithWebhook('/contract/redeliver-errors');
    await call('POST', `/v3/webhooks/${webhook.id}/pings`, { token });
    const [ping] = (await call('GET', `/v3/webhooks/${webhook.id}/deliveries`, { token })).body.data;
    const redeliveries = (deliveryId: string) => `/v3/webhooks/${webhook.id}/deliveries/${deliveryId}/redeliveries`;
    expectError(await call('POST', redeliveries(ping.id), { token }), 409, 'NOT_REDELIVERABLE');
    for (const unknown of ['dlv_000000000000000000000000', 'nope'])
      expectError(await call('POST', redeliveries(unknown), { token }), 404, 'DELIVERY_NOT_FOUND');
    // Another webhook's delivery is as unknown as a missing one, even to the same account.
    const other = await call('POST', '/v3/webhooks', { token, body: { url: receiver.urlFor('/contract/redeliver-other') } });
    expectError(
      await call('POST', `/v3/webhooks/${other.body.id}/deliveries/${ping.id}/redeliveries`, { token }),
      404,
      'DELIVERY_NOT_FOUND',
    );
    const stranger = await stack.createAccount();
    expectError(await call('POST', redeliveries(ping.id), { token: stranger.token }), 404, 'WEBHOOK_NOT_FOUND');
    expectError(await call('POST', redeliveries(ping.id), { token, body: { again: true } }), 400, 'VALIDATION_FAILED');
    expectError(
      await call('POST', redeliveries(ping.id), { token, rawBody: '{', headers: { 'content-type': 'application/json' } }),
      400,
      'MALFORMED_JSON',
    );
  });
});

describe('POST /v3/webhooks/{id}/secret', () => {
  it("answers 200 with a new random secret, or the caller's own", async () => {
    const { token, webhook } = await accountWithWebhook('/contract/secret');
    const random = await call('POST', `/v3/webhooks/${webhook.id}/secret`, { token });
    expect(random.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{32,}$/);
    expect(random.body.secret).not.toBe(webhook.secret);
    const own = `whsec_${'k'.repeat(32)}`;
    expect((await call('POST', `/v3/webhooks/${webhook.id}/secret`, { token, body: { secret: own } })).body).toEqual({ secret: own });
    expect((await call('POST', `/v3/webhooks/${webhook.id}/secret`, { token, body: {} })).body.secret).not.toBe(own);
  });

  it("answers 400 VALIDATION_FAILED for a secret of the wrong form, 400 MALFORMED_JSON, and 404 for another account's webhook", async () => {
    const { token, webhook } = await accountWithWebhook('/contract/secret-errors');
    const path = `/v3/webhooks/${webhook.id}/secret`;
    for (const secret of [`whsec_${'k'.repeat(31)}`, `whsec_${'k'.repeat(101)}`, `wh_${'k'.repeat(40)}`, `whsec_${'k'.repeat(31)}!`, 42]) {
      const refused = await call('POST', path, { token, body: { secret } });
      expect(expectError(refused, 400, 'VALIDATION_FAILED').details, String(secret)).toEqual([
        { path: '/secret', message: expect.any(String) },
      ]);
    }
    expectError(await call('POST', path, { token, rawBody: '{', headers: { 'content-type': 'application/json' } }), 400, 'MALFORMED_JSON');
    const stranger = await stack.createAccount();
    expectError(await call('POST', path, { token: stranger.token }), 404, 'WEBHOOK_NOT_FOUND');
  });
});

describe('POST, GET and DELETE /v3/webhooks/{id}/recoveries', () => {
  /** A webhook on `path` with one failed event delivery since the time returned. */
  async function webhookThatMissed(path: string) {
    const { account, token, webhook } = await accountWithWebhook(path);
    const listId = `contract-recover-${webhook.id}`;
    await stack.putList(listId, account.id);
    const since = new Date().toISOString();
    failingPaths.add(path);
    await stack.reportWrite(listId, 'missed');
    failingPaths.delete(path);
    return { token, webhook, since };
  }

  it('answers 202 with a Location, lists and reads it, 409 while it runs or the webhook is paused, and cancels it (200)', async () => {
    const path = '/contract/recover';
    const { token, webhook, since } = await webhookThatMissed(path);
    let release!: () => void;
    heldPaths.set(path, new Promise<void>((resolve) => (release = resolve)));
    const receivedBefore = receiver.requests.length;
    const recoveries = `/v3/webhooks/${webhook.id}/recoveries`;
    const started = await call('POST', recoveries, { token, body: { since } });
    expect(started).toMatchObject({ status: 202, body: { webhookId: webhook.id, since, status: 'running', total: 1 } });
    expect(started.headers.get('location')).toBe(`${recoveries}/${started.body.id}`);
    await receiver.waitForRequests(receivedBefore + 1);

    expect(expectError(await call('POST', recoveries, { token, body: { since } }), 409, 'RECOVERY_IN_PROGRESS').recoveryId).toBe(
      started.body.id,
    );
    // Its one send is under way: claimed, not yet answered.
    const underWay = { ...started.body, sent: 1 };
    expect((await call('GET', recoveries, { token })).body.data).toEqual([underWay]);
    expect((await call('GET', `${recoveries}/${started.body.id}`, { token })).body).toEqual(underWay);
    const cancelled = await call('DELETE', `${recoveries}/${started.body.id}`, { token });
    expect(cancelled).toMatchObject({ status: 200, body: { id: started.body.id, status: 'cancelled' } });
    release();
    heldPaths.delete(path);

    expect((await call('PATCH', `/v3/webhooks/${webhook.id}`, { token, body: { status: 'paused' } })).status).toBe(200);
    expectError(await call('POST', recoveries, { token, body: { since } }), 409, 'WEBHOOK_PAUSED');
  });

  it("answers 400 VALIDATION_FAILED and MALFORMED_JSON, and 404 for unknown ids or another account's", async () => {
    const { token, webhook, since } = await webhookThatMissed('/contract/recover-errors');
    const recoveries = `/v3/webhooks/${webhook.id}/recoveries`;
    const future = new Date(Date.now() + 60_000).toISOString();
    for (const [body, path] of [
      [{ since, until: since }, '/since'],
      [{ since, until: future }, '/until'],
      [{ since: 'soon' }, '/since'],
      [{ since, extra: true }, '/extra'],
    ] as const) {
      expect(expectError(await call('POST', recoveries, { token, body }), 400, 'VALIDATION_FAILED').details).toEqual([
        { path, message: expect.any(String) },
      ]);
    }
    expectError(
      await call('POST', recoveries, { token, rawBody: '{', headers: { 'content-type': 'application/json' } }),
      400,
      'MALFORMED_JSON',
    );

    const unknown = `${recoveries}/rcv_000000000000000000000000`;
    expectError(await call('GET', unknown, { token }), 404, 'RECOVERY_NOT_FOUND');
    expectError(await call('DELETE', unknown, { token }), 404, 'RECOVERY_NOT_FOUND');
    const stranger = await stack.createAccount();
    expectError(await call('POST', recoveries, { token: stranger.token, body: { since } }), 404, 'WEBHOOK_NOT_FOUND');
    expectError(await call('GET', recoveries, { token: stranger.token }), 404, 'WEBHOOK_NOT_FOUND');
    expectError(await call('GET', unknown, { token: stranger.token }), 404, 'WEBHOOK_NOT_FOUND');
    expectError(await call('DELETE', unknown, { token: stranger.token }), 404, 'WEBHOOK_NOT_FOUND');
  });
});

describe('GET and PATCH /v3/account', () => {
  it('answers 200 with the account, before and after PATCH sets and clears the notificationEmail, and 400s', async () => {
    const { token, id } = await stack.createAccount();
    expect(await call('GET', '/v3/account', { token })).toMatchObject({ status: 200, body: { id, notificationEmail: null } });
    const set = await call('PATCH', '/v3/account', { token, body: { notificationEmail: 'owner@example.com' } });
    expect(set).toMatchObject({ status: 200, body: { id, notificationEmail: 'owner@example.com' } });
    expect((await call('PATCH', '/v3/account', { token, body: { notificationEmail: null } })).body.notificationEmail).toBeNull();

    const invalid = await call('PATCH', '/v3/account', { token, body: { notificationEmail: 'not an address' } });
    expect(expectError(invalid, 400, 'VALIDATION_FAILED').details).toEqual([{ path: '/notificationEmail', message: expect.any(String) }]);
    expectError(
      await call('PATCH', '/v3/account', { token, rawBody: '{', headers: { 'content-type': 'application/json' } }),
      400,
      'MALFORMED_JSON',
    );
  });
});

describe('GET /v3/account/notices', () => {
  it('answers 200 with a page of notices once a webhook fails 10 deliveries in a row, and 400 for a bad query', async () => {
    const { account, token, webhook } = await accountWithWebhook('/contract/noticed');
    expect(await call('GET', '/v3/account/notices', { token })).toMatchObject({ status: 200, body: { data: [], next: null } });
    await stack.putList('contract-noticed', account.id);
    failingPaths.add('/contract/noticed');
    for (let i = 0; i < 10; i++) await stack.reportWrite('contract-noticed', `w${i}`);
    await stack.waitForFailureCount(token, webhook.id, 10);
    const page = await call('GET', `/v3/account/notices?limit=1&webhookId=${webhook.id}`, { token });
    expect(page).toMatchObject({
      status: 200,
      body: { data: [{ type: 'webhook.failing', webhookId: webhook.id, consecutiveFailures: 10, lastStatusCode: 500 }], next: null },
    });

    const badQuery = await call('GET', '/v3/account/notices?before=dlv_000000000000000000000000', { token });
    expect(expectError(badQuery, 400, 'VALIDATION_FAILED').details).toEqual([{ path: '/query/before', message: expect.any(String) }]);
  });
});

describe('GET /v3/account/audit-log', () => {
  it('answers 200 with a page of entries, each change with its actor, and 400 for an unknown action or a bad page', async () => {
    const { token, webhook } = await accountWithWebhook('/contract/audited');
    expect((await call('POST', `/v3/webhooks/${webhook.id}/secret`, { token })).status).toBe(200);
    const page = await call('GET', '/v3/account/audit-log?limit=1', { token });
    expect(page).toMatchObject({
      status: 200,
      body: {
        data: [{ action: 'webhook.secret_rotated', target: { type: 'webhook', id: webhook.id }, actor: { tokenName: 'initial' } }],
        next: expect.stringMatching(/^aud_/),
      },
    });
    const rest = await call('GET', `/v3/account/audit-log?action=webhook.created&before=${page.body.next}`, { token });
    expect(rest.body).toMatchObject({ data: [{ action: 'webhook.created', details: { url: webhook.url } }], next: null });

    const unknown = await call('GET', '/v3/account/audit-log?action=webhook.renamed', { token });
    expect(expectError(unknown, 400, 'VALIDATION_FAILED').details).toEqual([{ path: '/query/action', message: expect.any(String) }]);
    const badPage = await call('GET', '/v3/account/audit-log?before=ntc_000000000000000000000000', { token });
    expect(expectError(badPage, 400, 'VALIDATION_FAILED').details).toEqual([{ path: '/query/before', message: expect.any(String) }]);
  });
});

describe('a webhook paused by failures, probed until it answers', () => {
  it('logs its probes (kind=probe) and makes the notice webhook.reachable, as documented', async () => {
    const { account, token, webhook } = await accountWithWebhook('/contract/probed');
    await stack.putList('contract-probed', account.id);
    failingPaths.add('/contract/probed');
    for (let i = 0; i < 20; i++) await stack.reportWrite('contract-probed', `w${i}`);
    await stack.waitForFailureCount(token, webhook.id, 20);
    const failedProbe = await waitFor(
      async () => (await call('GET', `/v3/webhooks/${webhook.id}/deliveries?kind=probe`, { token })).body.data[0],
    );
    expect(failedProbe).toMatchObject({ kind: 'probe', event: 'ping', outcome: 'failed', statusCode: 500, listId: null });
    failingPaths.delete('/contract/probed');
    const reachable = await waitFor(
      async () =>
        (await call('GET', `/v3/account/notices?webhookId=${webhook.id}`, { token })).body.data[0]?.type === 'webhook.reachable' ||
        undefined,
    );
    expect(reachable).toBe(true);
    expect((await call('GET', `/v3/webhooks/${webhook.id}`, { token })).body).toMatchObject({
      status: 'paused',
      pausedReason: 'auto_failures',
    });
  });
});

describe('GET and POST /v3/account/tokens, DELETE /v3/account/tokens/{tokenId}, GET /v3/account/token', () => {
  it('lists the tokens (200), makes one (201), revokes it (204), then answers 404 TOKEN_NOT_FOUND', async () => {
    const account = await stack.createAccount();
    const listed = await call('GET', '/v3/account/tokens', { token: account.token });
    expect(listed).toMatchObject({ status: 200, body: { data: [{ name: 'initial', prefix: account.token.slice(0, 8) }] } });
    expect(await call('GET', '/v3/account/token', { token: account.token })).toMatchObject({ status: 200, body: listed.body.data[0] });
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const created = await call('POST', '/v3/account/tokens', { token: account.token, body: { name: 'contract', expiresAt } });
    expect(created).toMatchObject({ status: 201, body: { name: 'contract', expiresAt, token: expect.stringMatching(/^tok_/) } });
    expect((await call('DELETE', `/v3/account/tokens/${created.body.id}`, { token: account.token })).status).toBe(204);
    expectError(await call('DELETE', `/v3/account/tokens/${created.body.id}`, { token: account.token }), 404, 'TOKEN_NOT_FOUND');
  });

  it('answers 400 VALIDATION_FAILED and MALFORMED_JSON, and 409 TOKEN_LIMIT_EXCEEDED for an 11th token', async () => {
    const { token } = await stack.createAccount();
    const past = await call('POST', '/v3/account/tokens', { token, body: { name: 'x', expiresAt: '2000-01-01T00:00:00Z' } });
    expect(expectError(past, 400, 'VALIDATION_FAILED').details).toEqual([{ path: '/expiresAt', message: expect.any(String) }]);
    const malformed = await call('POST', '/v3/account/tokens', {
      token,
      rawBody: '{"name"',
      headers: { 'content-type': 'application/json' },
    });
    expectError(malformed, 400, 'MALFORMED_JSON');
    for (let i = 2; i <= 10; i++) expect((await call('POST', '/v3/account/tokens', { token, body: { name: `t${i}` } })).status).toBe(201);
    expectError(await call('POST', '/v3/account/tokens', { token, body: { name: 't11' } }), 409, 'TOKEN_LIMIT_EXCEEDED');
  });

  it('answers 403 INSUFFICIENT_SCOPE to a token asking for a scope it lacks, and makes a token of the scopes it holds', async () => {
    const { token } = await stack.createAccount();
    const narrow = await call('POST', '/v3/account/tokens', { token, body: { name: 'narrow', scopes: ['account:admin'] } });
    expect(narrow).toMatchObject({ status: 201, body: { scopes: ['account:admin'] } });
    const broader = await call('POST', '/v3/account/tokens', {
      token: narrow.body.token,
      body: { name: 'broader', scopes: ['account:admin', 'webhooks:read'] },
    });
    expect(expectError(broader, 403, 'INSUFFICIENT_SCOPE').requiredScope).toBe('webhooks:read');
  });
});

describe('GET /v3/account/usage', () => {
  it('answers 200 with the last 30 days', async () => {
    const { token } = await stack.createAccount();
    const usage = await call('GET', '/v3/account/usage', { token });
    expect(usage.status).toBe(200);
    expect(usage.body.data).toHaveLength(30);
    expect(usage.body.data.at(-1)).toMatchObject({ apiRequests: 1, deliveries: 0 });
  });
});

// ---- what every operation of a kind answers, from the document ----

describe('every operation that needs a token', () => {
  it("answers 401 UNAUTHORIZED with WWW-Authenticate to no token, a malformed one, an unknown one and the other API's", async () => {
    const secured = documenting('401');
    expect(secured.length).toBeGreaterThan(0);
    const account = await stack.createAccount();
    for (const found of secured) {
      const path = samplePath(found.template);
      const method = found.method.toUpperCase();
      const body = found.operation.requestBody ? validBody(found) : undefined;
      const otherApiToken = openApi.securitySchemes(found.operation).includes('internalToken') ? account.token : stack.internalApiToken;
      for (const options of [
        { body },
        { body, headers: { authorization: 'Basic dXNlcjpwdw==' } },
        { body, token: 'tok_unknown' },
        { body, token: otherApiToken },
        // Auth comes before the body is read.
        ...(found.operation.requestBody ? [{ rawBody: 'not json', headers: { 'content-type': 'text/plain' } }] : []),
      ] as RequestOptions[]) {
        const response = await call(method, path, options);
        expectError(response, 401, 'UNAUTHORIZED');
        expect(response.headers.get('www-authenticate')).toBe('Bearer');
      }
    }
  });
});

describe('every operation that needs a scope', () => {
  it('answers 403 INSUFFICIENT_SCOPE with requiredScope to a token of every scope but the one it needs, whatever the body', async () => {
    const scoped = documenting('403');
    expect(scoped.length).toBeGreaterThan(0);
    const account = await stack.createAccount();
    const lacking = new Map<string, string>();
    for (const scope of SCOPES) {
      const made = await call('POST', '/v3/account/tokens', {
        token: account.token,
        body: { name: `all but ${scope}`, scopes: SCOPES.filter((held) => held !== scope) },
      });
      lacking.set(scope, made.body.token);
    }
    for (const found of scoped) {
      const needed = found.operation['x-required-scopes']!;
      const method = found.method.toUpperCase();
      const path = samplePath(found.template);
      for (const scope of needed) {
        const token = lacking.get(scope)!;
        const body = found.operation.requestBody ? validBody(found) : undefined;
        expect(expectError(await call(method, path, { token, body }), 403, 'INSUFFICIENT_SCOPE').requiredScope).toBe(scope);
        if (!found.operation.requestBody) continue;
        // The scope comes before the body is read.
        const malformed = await call(method, path, { token, rawBody: '{', headers: { 'content-type': 'application/json' } });
        expect(expectError(malformed, 403, 'INSUFFICIENT_SCOPE').requiredScope).toBe(scope);
      }
    }
  });
});

describe('every operation an account token reaches, on an app whose limits allow one request', () => {
  it('answers 429 RATE_LIMITED with Retry-After and the RateLimit headers, per account and, without a valid token, per address', async () => {
    const limited = documenting('429');
    expect(limited.length).toBeGreaterThan(0);
    const access = createAccountAccess(stack.service.sql, {
      account: { perSecond: 1, burst: 1 },
      address: { perSecond: 1, burst: 1 },
      accountInFlight: 4,
    });
    await access.start();
    const api = await stack.startApiWith({ access, trustProxyHops: 1 });
    try {
      for (const found of limited) {
        const method = found.method.toUpperCase();
        const path = samplePath(found.template);
        const body = found.operation.requestBody ? validBody(found) : undefined;
        const account = await stack.createAccount();
        // Address of the documentation range, unique per operation: a bucket of its own.
        const address = { 'x-forwarded-for': `192.0.2.${limited.indexOf(found) + 1}` };
        expect((await api.request('GET', '/v3/webhooks', { token: account.token })).status).toBe(200);
        expect((await api.request('GET', '/v3/webhooks', { headers: address })).status).toBe(401);
        for (const options of [
          { token: account.token, body },
          { body, headers: address },
        ]) {
          const response = await api.request(method, path, options);
          check(method, path, response);
          expectError(response, 429, 'RATE_LIMITED');
          expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
          expect(response.headers.get('ratelimit-remaining')).toBe('0');
        }
      }
    } finally {
      await api.close();
      await access.stop();
    }
  });
});

describe('every operation with a request body', () => {
  it('answers 415 UNSUPPORTED_MEDIA_TYPE to a text/plain body', async () => {
    const operationsWithBody = withRequestBody();
    expect(operationsWithBody.length).toBeGreaterThan(0);
    for (const found of operationsWithBody) {
      const token = await tokenFor(found.operation);
      const response = await call(found.method.toUpperCase(), samplePath(found.template), {
        token,
        rawBody: JSON.stringify(validBody(found)),
        headers: { 'content-type': 'text/plain' },
      });
      expectError(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
  });

  it('reads a body of exactly the limit (64 KiB public, 1 MiB internal) and answers 413 PAYLOAD_TOO_LARGE one byte over it', async () => {
    for (const found of withRequestBody()) {
      const token = await tokenFor(found.operation);
      const method = found.method.toUpperCase();
      const path = samplePath(found.template);
      const limit = bodyLimit(found.template);
      // {"_":"aaa..."}: 8 bytes of JSON around the padding, all ASCII.
      const padded = (size: number) => JSON.stringify({ _: 'a'.repeat(size - 8) });
      expect(padded(limit)).toHaveLength(limit);

      const atLimit = await call(method, path, { token, rawBody: padded(limit), headers: { 'content-type': 'application/json' } });
      // The body was read and parsed: the unknown field `_` fails validation.
      expectError(atLimit, 400, 'VALIDATION_FAILED');

      const overLimit = await call(method, path, { token, rawBody: padded(limit + 1), headers: { 'content-type': 'application/json' } });
      expectError(overLimit, 413, 'PAYLOAD_TOO_LARGE');

      // Without a Content-Length (chunked), the limit holds while reading.
      const chunks = [padded(limit + 1)];
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = chunks.shift();
          if (next === undefined) controller.close();
          else controller.enqueue(new TextEncoder().encode(next));
        },
      });
      const chunked = await fetch(`${stack.service.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      });
      const chunkedResponse = { status: chunked.status, headers: chunked.headers, body: await chunked.json() };
      check(method, path, chunkedResponse);
      expectError(chunkedResponse, 413, 'PAYLOAD_TOO_LARGE');
    }
  });
});

/** Where PostgreSQL is down. */
let deadDatabase: DeadServer;

/**
 * Sends one request to an app of its own whose PostgreSQL is unreachable (the Temporal
 * client is the live one). A pool of its own per request: postgres.js backs off longer
 * after each failed connection attempt of a pool.
 */
async function sendWithoutDatabase(method: string, path: string, options: RequestOptions): Promise<ApiResponse> {
  const sql = createSql(`postgres://postgres@127.0.0.1:${deadDatabase.port}/none`, { max: 1 });
  const api = await stack.startApiWith({ sql });
  try {
    return await api.request(method, path, options);
  } finally {
    await api.close();
    await sql.end({ timeout: 1 });
  }
}

describe('every operation that documents 503, on an app whose PostgreSQL is unreachable', () => {
  beforeAll(async () => {
    deadDatabase = await startResettingServer();
  });
  afterAll(() => deadDatabase?.close());

  it('answers 503 UNAVAILABLE with Retry-After to a request that is otherwise valid', async () => {
    const unavailable = documenting('503');
    expect(unavailable.length).toBeGreaterThan(0);
    for (const found of unavailable) {
      const schemes = openApi.securitySchemes(found.operation);
      // An account token cannot be checked without PostgreSQL: any well-formed one will do.
      const token = schemes.includes('internalToken') ? stack.internalApiToken : schemes.length > 0 ? 'tok_contract' : null;
      const method = found.method.toUpperCase();
      const path = samplePath(found.template);
      const response = await sendWithoutDatabase(method, path, { token, body: found.operation.requestBody ? validBody(found) : undefined });
      check(method, path, response);
      expectError(response, 503, 'UNAVAILABLE');
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    }
  });
});

describe('routes and methods the document does not list', () => {
  it('answers a documented path with another method 405 METHOD_NOT_ALLOWED, with Allow naming the documented methods', async () => {
    const account = await stack.createAccount();
    for (const [template, item] of Object.entries(openApi.document.paths)) {
      const documented = HTTP_METHODS.filter((method) => item[method]);
      const wrong = (['put', 'patch', 'delete', 'post', 'get'] as const).find((method) => !item[method])!;
      const schemes = openApi.securitySchemes(item[documented[0]] as Operation);
      const token = schemes.includes('internalToken') ? stack.internalApiToken : schemes.includes('accountToken') ? account.token : null;
      const response = await send(stack.service.url, wrong.toUpperCase(), samplePath(template), { token });
      const where = `${wrong.toUpperCase()} ${template}`;
      expect(response.status, where).toBe(405);
      expect(validateEnvelope(response.body), `${where}: ${ajv.errorsText(validateEnvelope.errors)}`).toBe(true);
      expect(response.body.error.code).toBe('METHOD_NOT_ALLOWED');
      const allowed = (response.headers.get('allow') ?? '').split(/,\s*/).filter(Boolean).sort();
      const expected = documented.map((method) => method.toUpperCase());
      if (expected.includes('GET')) expected.push('HEAD');
      expect(allowed, where).toEqual(expected.sort());
    }
  });

  it('answers an unknown route 404 NOT_FOUND with the envelope, with or without a token', async () => {
    const account = await stack.createAccount();
    for (const [path, token] of [
      ['/nothing', null],
      ['/v3/nothing', account.token],
      ['/v3/nothing', null],
      ['/v3/webhooks/wh_000000000000000000000000/nothing', account.token],
      ['/internal/v3/nothing', stack.internalApiToken],
    ] as const) {
      for (const method of ['GET', 'POST']) {
        expect(openApi.find(method, path), `${method} ${path} is not documented`).toBeUndefined();
        const response = await send(stack.service.url, method, path, { token });
        expect(response.status, `${method} ${path}`).toBe(404);
        expect(validateEnvelope(response.body), ajv.errorsText(validateEnvelope.errors)).toBe(true);
        expect(response.body.error).toEqual({ code: 'NOT_FOUND', message: expect.any(String) });
      }
    }
  });
});

// ---- coverage: runs last in this file ----

describe('coverage of the document', () => {
  it('saw every documented status of every operation, and every error code each of those responses lists', () => {
    const missing: string[] = [];
    for (const { operation } of openApi.operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (status === 'default') continue;
        const seen = observed.get(`${operation.operationId} ${status}`);
        if (!seen) {
          missing.push(`${operation.operationId} ${status}`);
          continue;
        }
        for (const code of openApi.codes(response)) if (!seen.has(code)) missing.push(`${operation.operationId} ${status} ${code}`);
      }
    }
    expect(openApi.operations.length).toBeGreaterThan(0);
    expect(missing).toEqual([]);
  });
});
