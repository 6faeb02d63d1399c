// Bad input (issue 6, item 4): requests generated from the OpenAPI document the service
// serves (GET /v3/openapi.json), for every operation: wrong types for each property,
// missing and extra fields, huge and deeply nested values, unicode and lone surrogates,
// `__proto__` and `constructor` keys, too many items, over-long URLs, duplicate keys,
// malformed JSON, wrong content types and encodings, over-size bodies, bad and missing
// tokens, expired and revoked ones, tokens without the scope a route needs, another
// account's token on this one's ids, bad path and query values (another webhook's feed position
// among them), and other tenants' ids. For
// every answer: no 5xx; an error is the envelope with a status and code the operation
// documents (404 NOT_FOUND / 405 METHOD_NOT_ALLOWED off the document); a rejected request
// changes nothing in the database, the audit log included (no entry for a refused action);
// and no audit entry holds a secret or a token the service ever showed. After them all, no
// signing secret the API answered with and no key of SECRET_KEYS is in any log line or
// anything Temporal keeps. This file has a stack of its own and sends one request at a time,
// so the database snapshot before and after a request can only differ by that request.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import Ajv2020 from 'ajv/dist/2020';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/api/openapi';
import { encodePosition } from '../../src/db/event-feed';
import { errorEnvelope } from '../../src/objects';
import type { Resolver } from '../../src/delivery/url-policy';
import { bulkTaskQueue, listWriteWorkflowId, recoveryWorkflowId } from '../../src/contract/workflows';
import { SCOPES, lackingScope, type Scope } from '../../src/scopes';
import { OpenApi, type DocumentedOperation, type Schema } from '../support/openapi';
import type { Receiver } from '../support/receiver';
import { FIXED_SECRET_KEYS } from '../../scripts/lib/fixed-secret-keys';
import { secretForms } from '../support/postgres-files';
import { startTestStack, type TestStack } from '../support/stack';
import { keptWorkflows } from '../support/temporal-payloads';
import { recordScenario, type ScenarioFigures } from './support/scenarios';

const PUBLIC_BODY_LIMIT = 64 * 1024;
const INTERNAL_BODY_LIMIT = 1024 * 1024;
/**
 * What a rejected request must not change: each table, or what of it a request could change
 * (lastUsedAt moves with any request). The delivery log, which other files of the suite fill
 * (they share one database: after the largest write, hashing all of it took seconds a request),
 * is its count and the rows of this file's two webhooks, the only ones a request here can
 * reach; a row logged for any other webhook moves that webhook's deliveries_logged too.
 */
const tables = (): Record<string, string> => ({
  accounts: 'accounts',
  account_tokens: '(SELECT token_hash, account_id, id, name, prefix, expires_at, created_at, scopes FROM account_tokens)',
  lists: 'lists',
  list_members: 'list_members',
  webhooks: 'webhooks',
  webhook_health_hours: 'webhook_health_hours',
  list_writes: 'list_writes',
  deliveries: `(SELECT * FROM deliveries WHERE webhook_id IN ('${hookA}', '${hookB}'))`,
  deliveries_count: '(SELECT count(*) FROM deliveries)',
  feed_items: `(SELECT * FROM feed_items WHERE webhook_id IN ('${hookA}', '${hookB}'))`,
  notices: 'notices',
  recoveries: 'recoveries',
  recovery_items: 'recovery_items',
  audit_log: `(SELECT * FROM audit_log WHERE account_id IN ('${a.id}', '${b.id}'))`,
  audit_log_count: '(SELECT count(*) FROM audit_log)',
});
const UNKNOWN_WEBHOOK = 'wh_000000000000000000000000';
const UNKNOWN_TOKEN = 'tkn_000000000000000000000000';

const ajv = new Ajv2020({ strict: false });
const isEnvelope = ajv.compile(errorEnvelope);

/** The operations as this build documents them: the test names. The requests come from the served document. */
const local = new OpenApi(buildOpenApiDocument());
let served: OpenApi;

let stack: TestStack;
let receiver: Receiver;
let a: { id: string; token: string };
let b: { id: string; token: string };
let hookA: string;
let hookB: string;
/** A logged event delivery of each tenant's webhook, for the redelivery routes. */
let deliveryA: string;
let deliveryB: string;
/** A recovery of each tenant's webhook (ended: nothing to send), for the recovery routes. */
let recoveryA: string;
let recoveryB: string;
/** A time before every delivery: recoveries since it find nothing to send, and end at once. */
const SINCE = new Date().toISOString();
/** The token of b's, for the revocation route; one of a's, for b's token on it. */
let tokenB: string;
let tokenA: string;
/** Tokens of a's that hold one scope each, one per scope. */
const singleScoped: { scope: Scope; token: string }[] = [];
/** A token of a's past its expiry, and one revoked: every route refuses both (401). */
let expiredToken: string;
let revokedToken: string;
/** Every signing secret and token the service has shown this file: no audit entry may hold one. */
const shown = new Set<string>();
const listA = `fuzz-a-${randomBytes(4).toString('hex')}`;
const listB = `fuzz-b-${randomBytes(4).toString('hex')}`;
const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();

/** Every name fails to resolve: no fuzzed URL reaches real DNS. */
const noDns: Resolver = async (hostname) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};

beforeAll(async () => {
  // Relay sessions the fuzz opens are never deleted while it runs: only requests change the database.
  stack = await startTestStack({ RELAY_GRACE_SECONDS: '86400' }, { resolve: noDns });
  receiver = await stack.startReceiver();
  [a, b] = [await stack.createAccount(), await stack.createAccount()];
  const [createdA, createdB] = [
    await stack.registerWebhook(a.token, receiver.urlFor('/fuzz/a')),
    await stack.registerWebhook(b.token, receiver.urlFor('/fuzz/b')),
  ];
  [hookA, hookB] = [createdA.id, createdB.id];
  expect((await stack.putList(listA, a.id)).status).toBe(201);
  expect((await stack.putList(listB, b.id)).status).toBe(201);
  await stack.reportWrite(listA, 'fuzz-logged');
  await stack.reportWrite(listB, 'fuzz-logged');
  const loggedDelivery = async (token: string, hook: string) =>
    (await stack.request('GET', `/v3/webhooks/${hook}/deliveries?limit=1`, { token })).body.data[0].id as string;
  [deliveryA, deliveryB] = [await loggedDelivery(a.token, hookA), await loggedDelivery(b.token, hookB)];
  const endedRecovery = async (token: string, hook: string) => {
    const started = await stack.request('POST', `/v3/webhooks/${hook}/recoveries`, { token, body: { since: SINCE } });
    expect(started.status).toBe(202);
    await stack.service.client.workflow.getHandle(recoveryWorkflowId(hook, started.body.id)).result();
    return started.body.id as string;
  };
  [recoveryA, recoveryB] = [await endedRecovery(a.token, hookA), await endedRecovery(b.token, hookB)];
  tokenB = (await stack.request('GET', '/v3/account/tokens', { token: b.token })).body.data[0].id;
  tokenA = (await stack.request('GET', '/v3/account/tokens', { token: a.token })).body.data[0].id;
  for (const scope of SCOPES) {
    const made = await stack.request('POST', '/v3/account/tokens', { token: a.token, body: { name: `fuzz ${scope}`, scopes: [scope] } });
    expect(made.status).toBe(201);
    singleScoped.push({ scope, token: made.body.token });
  }
  const madeToken = async (name: string) => {
    const made = await stack.request('POST', '/v3/account/tokens', { token: a.token, body: { name } });
    expect(made.status).toBe(201);
    return made.body as { id: string; token: string };
  };
  // Expired as its row says, before any request used it (this process keeps none of it).
  const expiring = await madeToken('fuzz expired');
  await stack.service.sql`UPDATE account_tokens SET expires_at = now() - interval '1 minute' WHERE id = ${expiring.id}`;
  expiredToken = expiring.token;
  const revoking = await madeToken('fuzz revoked');
  expect((await stack.request('DELETE', `/v3/account/tokens/${revoking.id}`, { token: a.token })).status).toBe(204);
  revokedToken = revoking.token;
  for (const value of [
    a.token,
    b.token,
    createdA.secret,
    createdB.secret,
    expiredToken,
    revokedToken,
    ...singleScoped.map(({ token }) => token),
  ])
    shown.add(value);
  const document = await stack.request('GET', '/v3/openapi.json');
  expect(document.status).toBe(200);
  served = new OpenApi(document.body);
  baseline = await snapshot();
});
afterAll(() => stack?.stop());

// ---- the database, before and after ----

let baseline: Record<string, string>;

async function snapshot(): Promise<Record<string, string>> {
  const query = Object.entries(tables())
    .map(
      ([table, source]) =>
        `SELECT '${table}' AS t, count(*)::int AS n, md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h FROM ${source} x`,
    )
    .join(' UNION ALL ');
  const rows = await stack.service.sql.unsafe<{ t: string; n: number; h: string }[]>(query);
  return Object.fromEntries(rows.map((row) => [row.t, `${row.n} rows ${row.h}`]));
}

// ---- sending and judging one request ----

interface Probe {
  label: string;
  method: string;
  path: string;
  /** Sent as `Authorization: Bearer <token>`; `authorization` overrides it with a raw header. */
  token?: string | null;
  authorization?: string;
  /** The body's Content-Type; default application/json; null: none at all. */
  contentType?: string | null;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Sent chunked, without Content-Length. */
  chunked?: boolean;
  /** What this request must get, on top of the checks every request gets. */
  expect?: { status: number; code?: string; requiredScope?: string };
}

interface Tally {
  requests: number;
  fiveXx: number;
  statuses: Map<number, number>;
  unchanged: number;
  problems: string[];
}

const newTally = (): Tally => ({ requests: 0, fiveXx: 0, statuses: new Map(), unchanged: 0, problems: [] });

/** undici's request, not fetch: fetch refuses a body on GET, which is one of the cases. */
async function send(probe: Probe) {
  const headers: Record<string, string> = { ...probe.headers };
  if (probe.authorization !== undefined) headers.authorization = probe.authorization;
  else if (probe.token) headers.authorization = `Bearer ${probe.token}`;
  let body: Buffer | Readable | undefined;
  if (probe.body !== undefined) {
    const bytes = typeof probe.body === 'string' ? Buffer.from(probe.body, 'utf8') : probe.body;
    if (probe.contentType !== null) headers['content-type'] ??= probe.contentType ?? 'application/json';
    body = probe.chunked ? Readable.from([bytes]) : bytes;
  }
  const response = await request(`${stack.service.url}${probe.path}`, { method: probe.method, headers, body });
  const text = await response.body.text();
  let parsed: any = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: judged as such below
  }
  return { status: response.statusCode, body: parsed, text };
}

/** A signing secret, an account token or a relay ticket, by its form. */
const SECRET_FORMS = /\b(whsec|tok|rt)_[A-Za-z0-9_-]{16,}/;

/** Keeps every `secret` and `token` a body holds, at any depth. */
function rememberShown(body: unknown): void {
  if (Array.isArray(body)) body.forEach(rememberShown);
  else if (body !== null && typeof body === 'object') {
    for (const [key, value] of Object.entries(body)) {
      if ((key === 'secret' || key === 'token') && typeof value === 'string') shown.add(value);
      else rememberShown(value);
    }
  }
}

/** The fuzz's audit entries (a's and b's), as JSON text, that hold a secret or a token, shown or of their form. */
async function leakingAuditEntries(): Promise<{ entries: number; leaking: string[] }> {
  const rows = await stack.service.sql<{ entry: string }[]>`
    SELECT row_to_json(audit_log)::text AS entry FROM audit_log WHERE account_id IN (${a.id}, ${b.id})`;
  const leaking = rows
    .map(({ entry }) => entry)
    .filter((entry) => SECRET_FORMS.test(entry) || [...shown].some((value) => entry.includes(value)));
  return { entries: rows.length, leaking };
}

async function judge(probe: Probe, tally: Tally): Promise<void> {
  const response = await send(probe);
  rememberShown(response.body);
  tally.requests += 1;
  tally.statuses.set(response.status, (tally.statuses.get(response.status) ?? 0) + 1);
  const where = `${probe.label} (${probe.method} ${probe.path.length > 100 ? `${probe.path.slice(0, 100)}…` : probe.path}) → ${response.status}`;
  const problem = (text: string) => tally.problems.push(`${where}: ${text}`);
  const code: string | undefined = response.body?.error?.code;

  if (response.status >= 500) {
    tally.fiveXx += 1;
    problem(`a 5xx: ${response.text.slice(0, 200)}`);
  }
  const { status, code: expectedCode, requiredScope } = probe.expect ?? {};
  if (
    probe.expect &&
    (response.status !== status ||
      (expectedCode !== undefined && code !== expectedCode) ||
      (requiredScope !== undefined && response.body?.error?.requiredScope !== requiredScope))
  ) {
    problem(`expected ${status} ${expectedCode ?? ''} ${requiredScope ?? ''}, got ${response.text.slice(0, 200)}`);
  }

  const found = served.find(probe.method, probe.path);
  const documented = found?.operation.responses[String(response.status)];
  if (response.status >= 400) {
    if (!isEnvelope(response.body)) problem(`not the error envelope: ${response.text.slice(0, 200)}`);
    else if (found && !documented) problem(`status not documented for ${found.operation.operationId}: ${response.text.slice(0, 200)}`);
    else if (found && !served.codes(documented).includes(code!))
      problem(`code ${code} not documented for ${found.operation.operationId} ${response.status}`);
    else if (!found && served.knowsPath(probe.path) && !(response.status === 405 && code === 'METHOD_NOT_ALLOWED'))
      problem(`expected 405 METHOD_NOT_ALLOWED`);
    else if (!found && !served.knowsPath(probe.path) && !(response.status === 404 && code === 'NOT_FOUND'))
      problem(`expected 404 NOT_FOUND`);
    const after = await snapshot();
    const changed = Object.keys(after).filter((table) => after[table] !== baseline[table]);
    if (changed.length > 0) problem(`a rejected request changed ${changed.join(', ')}`);
    else tally.unchanged += 1;
    baseline = after;
  } else {
    if (!documented) problem(`success status not documented: ${response.text.slice(0, 200)}`);
    if (response.status === 202 && found?.operation.operationId === 'reportListWrite') {
      // Its deliveries follow: wait for them, so that they are not blamed on the next request.
      const listId = decodeURIComponent(probe.path.split('/')[4]);
      await stack.service.client.workflow.getHandle(listWriteWorkflowId(listId, response.body.writeId)).result();
    }
    if (response.status === 202 && found?.operation.operationId === 'createRecovery') {
      // It has nothing to send, and ends at once: wait for that, for the same reason.
      await stack.service.client.workflow.getHandle(recoveryWorkflowId(response.body.webhookId, response.body.id)).result();
    }
    baseline = await snapshot();
  }
}

function figuresOf(tally: Tally): ScenarioFigures {
  const statuses = [...tally.statuses]
    .sort(([x], [y]) => x - y)
    .map(([status, count]) => `${status}×${count}`)
    .join(' ');
  return {
    outcome: statuses,
    requests: tally.requests,
    fiveXx: tally.fiveXx,
    note: `${tally.unchanged} rejected, database unchanged by each`,
  };
}

// ---- request generation ----

type Path = Array<string | number>;

const WRONG_VALUES: unknown[] = [42, -1, 1.5, 1e300, true, false, null, {}, [], 'text', [1], [null], { a: 1 }];
const UNICODE = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffx',
  '\ud83d\ude00',
  '\u202eevil',
  'ｆｕｌｌ',
  'e\u0301',
  '\uffff',
  '\ufeffbom',
  '\u0085\u2028\u2029',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
];

const clone = <T>(value: T): T => structuredClone(value);
const short = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 24 ? `${text.slice(0, 21)}…(${text.length})` : text;
};

function setAt(root: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const copy: any = clone(root);
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key];
  node[path.at(-1)!] = value;
  return copy;
}

function deleteAt(root: unknown, path: Path): unknown {
  const copy: any = clone(root);
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key];
  delete node[path.at(-1)!];
  return copy;
}

/** `{<member>, ...the members of object}` as JSON text; `last` puts it after them. */
function withMember(object: unknown, member: string, last = false): string {
  const inner = JSON.stringify(object).slice(1, -1);
  return `{${(last ? [inner, member] : [member, inner]).filter(Boolean).join(',')}}`;
}

const nestedArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

interface BodyCase {
  label: string;
  text: string;
}

/** Mutations of `value` (valid for `schema`) at `path` of the body `root`, recursing into objects and arrays of objects. */
function* mutations(schema: Schema, root: unknown, path: Path, limit: number): Generator<BodyCase> {
  const at = (name: string | number) => `/${[...path, name].join('/')}`;
  const here = path.reduce<any>((node, key) => node?.[key], root);
  for (const [name, property] of Object.entries<Schema>(schema.properties ?? {})) {
    const current = here?.[name];
    const target = [...path, name];
    for (const wrong of WRONG_VALUES) {
      if (JSON.stringify(wrong) !== JSON.stringify(current))
        yield { label: `${at(name)} = ${short(wrong)}`, text: JSON.stringify(setAt(root, target, wrong)) };
    }
    if ((schema.required ?? []).includes(name)) yield { label: `${at(name)} missing`, text: JSON.stringify(deleteAt(root, target)) };
    for (const value of property.enum ?? [])
      yield { label: `${at(name)} = ${short(value)}`, text: JSON.stringify(setAt(root, target, value)) };
    const types: string[] = [property.type ?? []].flat();
    if (types.includes('string')) {
      const long = (property.maxLength ?? 1000) + 1;
      yield { label: `${at(name)}: ${long} characters (maxLength + 1)`, text: JSON.stringify(setAt(root, target, 'x'.repeat(long))) };
      yield { label: `${at(name)}: a string near the body limit`, text: JSON.stringify(setAt(root, target, 'y'.repeat(limit - 1000))) };
      yield { label: `${at(name)}: empty`, text: JSON.stringify(setAt(root, target, '')) };
      for (const text of UNICODE) yield { label: `${at(name)} = ${short(text)}`, text: JSON.stringify(setAt(root, target, text)) };
      yield { label: `${at(name)}: valid + NUL`, text: JSON.stringify(setAt(root, target, `${current ?? 'x'}\u0000`)) };
      yield {
        label: `${at(name)}: 10,000-level array`,
        text: withMember(deleteAt(root, target), `${JSON.stringify(name)}:${nestedArrays(10_000)}`),
      };
    }
    if (types.includes('array')) {
      const item = property.items as Schema | undefined;
      const sample = Array.isArray(current) && current.length > 0 ? current[0] : (item?.enum?.[0] ?? 'x');
      const many = (property.maxItems ?? 1000) + 1;
      const distinct = Array.from({ length: many }, (_, i) => (typeof sample === 'string' && !item?.enum ? `${sample}-${i}` : sample));
      yield { label: `${at(name)}: ${many} items (maxItems + 1)`, text: JSON.stringify(setAt(root, target, distinct)) };
      yield { label: `${at(name)}: duplicate items`, text: JSON.stringify(setAt(root, target, [sample, sample])) };
      yield {
        label: `${at(name)}: 10,000 items`,
        text: JSON.stringify(
          setAt(
            root,
            target,
            Array.from({ length: 10_000 }, () => sample),
          ),
        ),
      };
      for (const wrong of [[1], [null], [[]], [{}], ['\u0000'], ['\ud800']])
        yield { label: `${at(name)} = ${short(wrong)}`, text: JSON.stringify(setAt(root, target, wrong)) };
      yield {
        label: `${at(name)}: 10,000-level array`,
        text: withMember(deleteAt(root, target), `${JSON.stringify(name)}:${nestedArrays(10_000)}`),
      };
      if (item?.type === 'object' && Array.isArray(current) && current.length > 0) yield* mutations(item, root, [...target, 0], limit);
    }
  }
  if (schema.type === 'object' && here && typeof here === 'object') {
    yield { label: `${at('extra')}: an unknown field`, text: JSON.stringify(setAt(root, [...path, 'extra'], 1)) };
  }
}

/** Every body case of an operation whose valid body is `valid`. */
function* bodyCases(schema: Schema, valid: unknown, limit: number): Generator<BodyCase> {
  for (const whole of [[], 'text', 42, null, true, [valid]]) yield { label: `the body is ${short(whole)}`, text: JSON.stringify(whole) };
  yield* mutations(schema, valid, [], limit);
  yield { label: '__proto__ key', text: withMember(valid, '"__proto__":{"polluted":"yes","admin":true}') };
  yield { label: 'constructor.prototype key', text: withMember(valid, '"constructor":{"prototype":{"polluted":"yes"}}') };
  yield { label: '__proto__ key last', text: withMember(valid, '"__proto__":{"polluted":"yes"}', true) };
  yield { label: 'extra field nested 10,000 levels (arrays)', text: withMember(valid, `"deep":${nestedArrays(10_000)}`) };
  yield { label: 'extra field nested 10,000 levels (objects)', text: withMember(valid, `"deep":${nestedObjects(10_000)}`) };
  const maxDepth = Math.floor((limit - JSON.stringify(valid).length - 20) / 2);
  yield { label: `extra field nested ${maxDepth} levels (the body limit)`, text: withMember(valid, `"deep":${nestedArrays(maxDepth)}`) };
  for (const name of Object.keys(schema.properties ?? {})) {
    yield { label: `duplicate key ${name}, the wrong one last`, text: withMember(valid, `${JSON.stringify(name)}:{"wrong":true}`, true) };
    yield { label: `duplicate key ${name}, the wrong one first`, text: withMember(valid, `${JSON.stringify(name)}:{"wrong":true}`) };
  }
  for (const text of [
    '{',
    '{"a":}',
    '[1,]',
    `${JSON.stringify(valid)} trailing`,
    `\ufeff${JSON.stringify(valid)}`,
    'nul',
    "{'a':1}",
    `${JSON.stringify(valid)}\u0000`,
    '{"a":"\\ud800"',
    '"\\u0000"',
    '1e999999',
  ]) {
    yield { label: `malformed: ${short(text)}`, text };
  }
}

/** A small valid request body for each operation that takes one. */
function validBodyFor(operationId: string): unknown {
  switch (operationId) {
    case 'registerWebhook':
      return { url: receiver.urlFor('/fuzz/a') };
    case 'updateWebhook':
      return { status: 'active' };
    case 'pingWebhook':
    case 'redeliverDelivery':
    case 'rotateSecret':
    case 'createRelaySession':
    case 'createRelayConnection':
      return {};
    case 'createAccount':
    case 'createToken':
      return { name: 'fuzz' };
    case 'updateAccount':
      return { notificationEmail: 'fuzz@example.com' };
    case 'putList':
      return { ownerAccountId: a.id, memberAccountIds: [] };
    case 'reportListWrite':
      return { writeId: 'fuzz-write', changes: [{ type: 'item.added', itemId: 'item-1' }] };
    case 'createRecovery':
      return { since: SINCE };
    case 'sendTestEvent':
      return { event: 'item.added' };
    default:
      throw new Error(`no valid body for ${operationId}: add one here`);
  }
}

/** The path of an operation with the caller's own ids (or, for deletions, ids that exist nowhere). */
function ownPath(found: DocumentedOperation, values: Record<string, string> = {}): string {
  const deleting = found.method === 'delete';
  const defaults: Record<string, string> = {
    id: deleting ? UNKNOWN_WEBHOOK : hookA,
    listId: deleting ? 'fuzz-nowhere' : listA,
    deliveryId: deliveryA,
    recoveryId: recoveryA,
    // Never a token of a's: the fuzz goes on with a.token.
    tokenId: UNKNOWN_TOKEN,
  };
  return found.template.replace(/\{([^}]+)\}/g, (_, name: string) => values[name] ?? defaults[name]);
}

function tokenFor(found: DocumentedOperation): string | null {
  const schemes = served.securitySchemes(found.operation);
  if (schemes.includes('internalToken')) return stack.internalApiToken;
  if (schemes.includes('accountToken')) return a.token;
  return null;
}

const BAD_PATH_VALUES = [
  'bad%20id',
  'a%00b',
  '%E0%A4%A',
  '%F0%9F%92%A9',
  '%ED%A0%80',
  '..%2F..%2Fetc%2Fpasswd',
  'x'.repeat(300),
  '__proto__',
  'constructor',
  `wh_${'g'.repeat(24)}`,
  '%ZZ',
  '*',
  "'%20OR%201=1--",
  '%FF%FE',
];

/** Every request of the fuzz for one operation. */
function* probesFor(found: DocumentedOperation): Generator<Probe> {
  const method = found.method.toUpperCase();
  const token = tokenFor(found);
  const path = ownPath(found);
  const schemes = served.securitySchemes(found.operation);
  const schema = served.requestSchema(found.operation);
  const limit = found.template.startsWith('/internal/') ? INTERNAL_BODY_LIMIT : PUBLIC_BODY_LIMIT;
  const valid = schema ? validBodyFor(found.operation.operationId) : undefined;
  const validText = valid === undefined ? undefined : JSON.stringify(valid);
  const base = { method, path, token, body: validText };

  // Tokens: missing, malformed, unknown, the other API's, too long, not ASCII.
  if (schemes.length > 0) {
    const otherApi = schemes.includes('internalToken') ? a.token : stack.internalApiToken;
    const unauthorized = { status: 401, code: 'UNAUTHORIZED' };
    yield { ...base, label: 'no token', token: null, expect: unauthorized };
    for (const authorization of [
      'Bearer',
      'Bearer ',
      'Basic dXNlcjpwYXNz',
      `Token ${token}`,
      'Bearer tok_unknown',
      `Bearer ${token} extra`,
      `Bearer ${'t'.repeat(600)}`,
      'Bearer tök',
      `Bearer ${otherApi}`,
      `Bearer ${token!.slice(0, -1)}`,
    ]) {
      yield { ...base, label: `Authorization: ${short(authorization)}`, authorization, expect: unauthorized };
    }
    yield { ...base, label: 'no token, malformed body', token: null, body: '{', expect: unauthorized };
  }
  if (schemes.includes('accountToken')) {
    yield { ...base, label: 'an expired token', token: expiredToken, expect: { status: 401, code: 'UNAUTHORIZED' } };
    yield { ...base, label: 'a revoked token', token: revokedToken, expect: { status: 401, code: 'UNAUTHORIZED' } };
  }

  // Scopes: each single-scope token of a's. One without a scope the operation needs is refused
  // before anything is read or done, whatever its body; one with them gets the route's answer.
  if (schemes.includes('accountToken')) {
    const required = (found.operation['x-required-scopes'] ?? []) as Scope[];
    for (const { scope, token: scoped } of singleScoped) {
      const lacking = lackingScope([scope], required);
      const refused = lacking ? { status: 403, code: 'INSUFFICIENT_SCOPE', requiredScope: lacking } : undefined;
      yield { ...base, label: `a ${scope} token`, token: scoped, expect: refused };
      if (refused && validText !== undefined)
        yield { ...base, label: `a ${scope} token, malformed body`, token: scoped, body: '{', expect: refused };
    }
  }
  if (schemes.length === 0) {
    yield { ...base, label: 'a token where none is needed', authorization: 'Bearer tok_unknown' };
  }

  // Headers and a query string nobody asked for.
  yield { ...base, label: 'X-Request-Id of 5,000 characters', headers: { 'x-request-id': 'r'.repeat(5000) } };
  yield { ...base, label: 'X-Request-Id not ASCII', headers: { 'x-request-id': 'r\u00ff\u00e9' } };
  yield { ...base, label: 'Accept: application/xml', headers: { accept: 'application/xml' } };
  if (!QUERY_CASES[found.operation.operationId])
    yield { ...base, label: 'an unknown query', path: `${path}?__proto__[x]=1&constructor=y&x=${'q'.repeat(2000)}` };

  // Bodies.
  if (schema && validText !== undefined) {
    for (const { label, text } of bodyCases(schema, valid, limit)) yield { ...base, label, body: text };
    for (const [contentType, body] of [
      ['text/plain', validText],
      ['application/x-www-form-urlencoded', 'a=1&b=2'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--'],
      ['application/xml', '<a/>'],
      ['application/jsonx', validText],
      ['application/merge-patch+json', validText],
      ['application/json; charset=utf-16', Buffer.from(validText, 'utf16le')],
    ] as Array<[string, string | Buffer]>) {
      yield { ...base, label: `Content-Type: ${contentType}`, contentType, body };
    }
    yield { ...base, label: 'a body without Content-Type', contentType: null, expect: { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' } };
    yield {
      ...base,
      label: 'Content-Encoding: gzip',
      headers: { 'content-encoding': 'gzip' },
      body: gzipSync(validText),
      expect: { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
    };
    yield {
      ...base,
      label: 'Content-Encoding: br',
      headers: { 'content-encoding': 'br' },
      expect: { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
    };
    yield {
      ...base,
      label: 'invalid UTF-8 bytes',
      body: Buffer.concat([Buffer.from('{"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('":1}')]),
    };
    const over = withMember(valid, `"pad":"${'p'.repeat(limit)}"`);
    yield { ...base, label: 'body over the limit', body: over, expect: { status: 413, code: 'PAYLOAD_TOO_LARGE' } };
    yield { ...base, label: 'body over the limit, chunked', body: over, chunked: true, expect: { status: 413, code: 'PAYLOAD_TOO_LARGE' } };
  } else {
    // Routes without a body: one anyway.
    yield { ...base, label: 'a JSON body where none is read', body: '{"x":1}' };
    yield { ...base, label: 'a malformed body where none is read', body: '{', contentType: 'text/plain' };
    yield {
      ...base,
      label: 'a body over the limit where none is read',
      body: 'z'.repeat(PUBLIC_BODY_LIMIT + 1),
      contentType: 'text/plain',
    };
  }

  // Path parameters: other tenants' ids, then values that are no id at all.
  for (const name of found.template.match(/\{([^}]+)\}/g)?.map((part) => part.slice(1, -1)) ?? []) {
    if (name === 'id' && schemes.includes('accountToken')) {
      yield {
        ...base,
        label: "another tenant's webhook",
        path: ownPath(found, { id: hookB }),
        expect: { status: 404, code: 'WEBHOOK_NOT_FOUND' },
      };
      yield {
        ...base,
        label: "another tenant's token on this one's webhook",
        token: b.token,
        expect: { status: 404, code: 'WEBHOOK_NOT_FOUND' },
      };
    }
    if (name === 'tokenId') {
      yield {
        ...base,
        label: "another tenant's token on this one's token",
        token: b.token,
        path: ownPath(found, { tokenId: tokenA }),
        expect: { status: 404, code: 'TOKEN_NOT_FOUND' },
      };
    }
    const theirs = { deliveryId: [deliveryB, 'delivery', 'DELIVERY_NOT_FOUND'], tokenId: [tokenB, 'token', 'TOKEN_NOT_FOUND'] }[name];
    if (theirs) {
      const [value, what, code] = theirs;
      yield { ...base, label: `another tenant's ${what}`, path: ownPath(found, { [name]: value }), expect: { status: 404, code } };
    }
    if (name === 'recoveryId') {
      yield {
        ...base,
        label: "another tenant's recovery",
        path: ownPath(found, { id: hookA, recoveryId: recoveryB }),
        expect: { status: 404, code: 'RECOVERY_NOT_FOUND' },
      };
    }
    for (const value of BAD_PATH_VALUES) yield { ...base, label: `{${name}} = ${short(value)}`, path: ownPath(found, { [name]: value }) };
  }

  // Query strings.
  for (const query of QUERY_CASES[found.operation.operationId] ?? [])
    yield { ...base, label: `?${short(query)}`, path: `${path}?${query}` };
}

/** Paging queries every listing route takes. */
const PAGING_CASES = [
  'limit=0',
  'limit=101',
  'limit=-1',
  'limit=1e2',
  'limit=abc',
  'limit=',
  'limit=1&limit=2',
  'limit[]=1',
  'before=garbage',
  'before=dlv_%00',
  'x=1',
  '__proto__=1',
  'constructor=x',
  `limit=${'9'.repeat(5000)}`,
  'limit=%E0%A4%A',
  'limit=%00',
];

/** The query strings of the operations that read one. */
const QUERY_CASES: Record<string, string[]> = {
  listDeliveries: [
    'outcome=lost',
    'kind=',
    'event=ping%00',
    'event=__proto__',
    'outcome[]=failed',
    'kind=event&kind=ping',
    `before=dlv_${'0'.repeat(24)}`,
    ...PAGING_CASES,
  ],
  // No valid wait above 0: a request held until its time is up would only slow the fuzz.
  listEvents: [
    'after=',
    'after=garbage',
    `after=${'0'.repeat(40)}`,
    `after=${encodePosition(UNKNOWN_WEBHOOK, { xid: '1', seq: '1' })}`,
    `after=${'F'.repeat(40)}`,
    'after[]=x',
    'after=x&after=y',
    'wait=31',
    'wait=1.5',
    'wait=-0',
    'wait=%00',
    'wait=0',
    'limit=501',
    'limit=500',
    ...PAGING_CASES,
  ],
  listAuditLog: [
    'action=webhook.renamed',
    'action=',
    'action=WEBHOOK.CREATED',
    'action[]=webhook.created',
    'action=webhook.created&action=webhook.deleted',
    'action=__proto__',
    `before=aud_${'0'.repeat(24)}`,
    `before=ntc_${'0'.repeat(24)}`,
    'before=aud_%00',
    ...PAGING_CASES,
  ],
  listNotices: [
    `before=ntc_${'0'.repeat(24)}`,
    `before=dlv_${'0'.repeat(24)}`,
    'webhookId=',
    `webhookId=wh_${'0'.repeat(24)}`,
    'webhookId=__proto__',
    'webhookId[]=x',
    'type=webhook.paused',
    ...PAGING_CASES,
  ],
};

// ---- the tests ----

const documentedOperations = local.operations.map(
  (found) => [`${found.operation.operationId}: ${found.method.toUpperCase()} ${found.template}`, found.operation.operationId] as const,
);

describe('bad input, generated from the OpenAPI document', () => {
  it('fuzzes the document the service serves', ({ task }) => {
    recordScenario(task, {
      scenario: 'fuzz: the served document is the one the requests come from',
      outcome: `${served.operations.length} operations`,
    });
    expect(served.document).toEqual(JSON.parse(JSON.stringify(local.document)));
    expect(documentedOperations.length).toBeGreaterThan(0);
  });

  it.for(documentedOperations)('%s', async ([, operationId], { task }) => {
    const tally = newTally();
    const row = recordScenario(task, { scenario: `fuzz: ${operationId}` });
    const found = served.byId(operationId);
    for (const probe of probesFor(found)) await judge(probe, tally);
    Object.assign(row, figuresOf(tally));
    expect(tally.problems).toEqual([]);
    expect(tally.fiveXx).toBe(0);
    expect(tally.requests).toBeGreaterThan(5);
    expect((await leakingAuditEntries()).leaking).toEqual([]);
  });

  it("other tenants' list ids, unknown routes and methods", async ({ task }) => {
    const tally = newTally();
    const row = recordScenario(task, { scenario: "fuzz: other tenants' list ids, unknown routes and methods" });
    const json = (body: unknown) => JSON.stringify(body);
    const invalidListIds = { status: 400, code: 'INVALID_LIST_IDS' };
    const probes: Probe[] = [
      {
        label: "register with another tenant's list",
        method: 'POST',
        path: '/v3/webhooks',
        token: a.token,
        body: json({ url: receiver.urlFor('/fuzz/a'), listIds: [listB] }),
        expect: invalidListIds,
      },
      {
        label: "register with own and another tenant's lists",
        method: 'POST',
        path: '/v3/webhooks',
        token: a.token,
        body: json({ url: receiver.urlFor('/fuzz/a'), listIds: [listA, listB] }),
        expect: invalidListIds,
      },
      {
        label: "PATCH to another tenant's list",
        method: 'PATCH',
        path: `/v3/webhooks/${hookA}`,
        token: a.token,
        body: json({ listIds: [listB] }),
        expect: invalidListIds,
      },
      {
        label: "another tenant's webhook as a list id",
        method: 'PATCH',
        path: `/v3/webhooks/${hookA}`,
        token: a.token,
        body: json({ listIds: [hookB] }),
        expect: invalidListIds,
      },
      {
        label: 'a 2049-character URL',
        method: 'POST',
        path: '/v3/webhooks',
        token: a.token,
        body: json({ url: receiver.urlFor(`/${'u'.repeat(2049 - receiver.urlFor('/').length)}`) }),
        expect: { status: 400, code: 'VALIDATION_FAILED' },
      },
      {
        label: '51 listIds',
        method: 'POST',
        path: '/v3/webhooks',
        token: a.token,
        body: json({ url: receiver.urlFor('/fuzz/a'), listIds: Array.from({ length: 51 }, (_, i) => `l${i}`) }),
        expect: { status: 400, code: 'VALIDATION_FAILED' },
      },
    ];
    for (const [template, item] of Object.entries(served.document.paths)) {
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
        if (item[method.toLowerCase()]) continue;
        const path = template
          .replace(/\{id\}/, hookA)
          .replace(/\{listId\}/, listA)
          .replace(/\{tokenId\}/, UNKNOWN_TOKEN);
        const token = template.startsWith('/internal/') ? stack.internalApiToken : a.token;
        probes.push({
          label: `${method} ${template}`,
          method,
          path,
          token,
          body: method === 'GET' ? undefined : '{}',
          expect: { status: 405, code: 'METHOD_NOT_ALLOWED' },
        });
      }
    }
    // A path matches in its own letters only: in others it is no route, token or not (it once
    // reached its route past the token check, and created an account without one).
    for (const [path, token] of [
      ['/V3/webhooks', null],
      [`/v3/Webhooks/${hookA}`, a.token],
      ['/V3/account/tokens', a.token],
      ['/INTERNAL/v3/accounts', null],
      [`/internal/V3/lists/${listA}`, stack.internalApiToken],
    ] as const) {
      for (const method of ['GET', 'POST', 'PUT'])
        probes.push({
          label: `${method} ${path}`,
          method,
          path,
          token,
          body: '{"name":"fuzz"}',
          expect: { status: 404, code: 'NOT_FOUND' },
        });
    }
    for (const path of [
      '/',
      '/v3',
      '/v3/webhook',
      `/v3/webhooks/${hookA}/pings/1`,
      '/v3/webhooks/x/y/z',
      '/internal/v3',
      '/internal/v3/lists',
      `/internal/v3/lists/${listA}/writes/w`,
      '/%2e%2e/%2e%2e/etc/passwd',
      `/v3/${'a'.repeat(8000)}`,
      '/v3/%00',
      '/v4/webhooks',
    ]) {
      for (const method of ['GET', 'POST'])
        probes.push({ label: `${method} ${short(path)}`, method, path, token: a.token, expect: { status: 404, code: 'NOT_FOUND' } });
    }
    for (const probe of probes) await judge(probe, tally);
    Object.assign(row, figuresOf(tally));
    expect(tally.problems).toEqual([]);
  });

  it("answers a header beyond Node's 16 KiB limit with 431, not a 5xx", async ({ task }) => {
    const row = recordScenario(task, { scenario: "fuzz: a header beyond Node's 16 KiB limit", requests: 1, fiveXx: 0 });
    const response = await send({
      label: 'huge header',
      method: 'GET',
      path: '/v3/webhooks',
      token: a.token,
      headers: { 'x-huge': 'h'.repeat(20_000) },
    });
    const enveloped = isEnvelope(response.body);
    row.outcome = `${response.status}${enveloped ? ` ${response.body.error.code}` : ''}`;
    // Node's HTTP parser answers before the app sees the request: no envelope unless the server adds one.
    row.note = enveloped ? 'in the error envelope' : "Node's own answer, empty body (no error envelope)";
    expect(response.status).toBe(431);
    if (response.text !== '') expect(enveloped).toBe(true);
  });

  it('leaves no secret or token in any audit entry of the changes it made', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'fuzz: no secret or token in the audit log' });
    const { entries, leaking } = await leakingAuditEntries();
    row.outcome = `${entries} entries, ${leaking.length} holding a secret or a token`;
    row.note = `checked against ${shown.size} secrets and tokens the service showed, and their forms`;
    // The fuzz's successful requests made changes of every kind: rotations and registrations among them.
    expect(entries).toBeGreaterThan(0);
    expect(leaking).toEqual([]);
  });

  it('writes no signing secret and no key of SECRET_KEYS into a log line or anything Temporal keeps', async ({ task }) => {
    const row = recordScenario(task, { scenario: 'fuzz: no secret or key in a log line or a Temporal payload' });
    // Registrations, rotations and relay sessions among the requests above answered with secrets of their own.
    const answeredSecrets = [...shown].filter((value) => value.startsWith('whsec_'));
    expect(answeredSecrets.length).toBeGreaterThan(2);
    const key = FIXED_SECRET_KEYS.split(':')[1];
    const needles = [...answeredSecrets.flatMap(secretForms), Buffer.from(key), Buffer.from(key, 'base64'), Buffer.from('whsec_')];
    const found = (bytes: Buffer) => needles.filter((needle) => bytes.includes(needle)).map((needle) => needle.toString('utf8', 0, 10));
    const logs = stack.logs.join('');
    const kept = await keptWorkflows(
      stack.service.client,
      `TaskQueue = '${stack.taskQueue}' OR TaskQueue = '${bulkTaskQueue(stack.taskQueue)}'`,
    );
    row.outcome = `${answeredSecrets.length} secrets and the key: in none of ${stack.logs.length} log lines and ${kept.length} workflows`;
    expect(stack.logs.length).toBeGreaterThan(0);
    expect(kept.length).toBeGreaterThan(0);
    expect(found(Buffer.from(logs))).toEqual([]);
    for (const workflow of kept) {
      expect(found(workflow.bytes), workflow.workflowId).toEqual([]);
      expect(found(Buffer.from(workflow.description)), workflow.workflowId).toEqual([]);
    }
  });

  it('leaves no trace on Object.prototype (the API runs in this process)', ({ task }) => {
    recordScenario(task, { scenario: 'fuzz: no prototype pollution', outcome: 'Object.prototype unchanged' });
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});
