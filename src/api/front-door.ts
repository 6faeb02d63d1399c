// The API's front door: a plain Node handler in front of Koa that refuses, before anything
// else, what this process can refuse from what it holds in memory:
// - a body declared (Content-Length) over its API's limit: 413, answered with
//   Connection: close, so that the body is never read;
// - a public API request over a limit this process holds as spent (account-access.ts,
//   refusalFromMemory): a token it knows as valid whose account is over its limit, or any
//   other request from a client address over its limit: 429.
// Such a refusal costs no body read, no routing, no Koa middleware, no log line of its own
// (the metrics count it, refusal-log.ts sums it up) and no statement: under a flood, what saying no costs is what
// is left for every other tenant. Every other request goes to Koa as it came. The answers are
// the ones Koa gives (errorAnswer, in the same header order), and Koa, which is asked too,
// refuses the same requests the same way when they come to it first.
import type { IncomingHttpHeaders, IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type Koa from 'koa';
import { INTERNAL_BODY_LIMIT_BYTES, PUBLIC_BODY_LIMIT_BYTES } from '../limits';
import type { Logger } from '../logger';
import type { AccountAccess } from './account-access';
import { apiErrors, errorAnswer, type ApiError, type ErrorAnswer } from './errors';
import { bearerToken, requestIdOf, type ApiState } from './middleware';
import { rateLimitHeaders } from './rate-limits';
import { metrics } from '../metrics';
import { createRefusalLog } from './refusal-log';

/** Why the front door refused a request: a body declared over the limit (413), or a limit it is over (429). */
export type RefusalReason = 'body_too_large' | 'account_rate_limit' | 'address_rate_limit';

/** Each reason's metric series, found once: a refusal costs an addition. */
function refusalCounters(): Record<RefusalReason, { inc(): void }[]> {
  return {
    body_too_large: [metrics.httpRefused.labels({ status: '413', reason: 'body_too_large' })],
    account_rate_limit: [
      metrics.httpRefused.labels({ status: '429', reason: 'account_rate_limit' }),
      metrics.rateLimited.labels({ limit: 'account' }),
    ],
    address_rate_limit: [
      metrics.httpRefused.labels({ status: '429', reason: 'address_rate_limit' }),
      metrics.rateLimited.labels({ limit: 'address' }),
    ],
  };
}

/** Every route that reads a body takes one of these methods; no route of another method reads one. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
/** The one public path that needs no token, and so is never limited. */
const OPENAPI_PATH = '/v3/openapi.json';

/** The body limit of the request's API when its method is one whose routes read a body; null otherwise. */
export function bodyLimitOf(method: string, path: string): number | null {
  if (!BODY_METHODS.has(method)) return null;
  if (path.startsWith('/v3/')) return PUBLIC_BODY_LIMIT_BYTES;
  if (path.startsWith('/internal/v3/')) return INTERNAL_BODY_LIMIT_BYTES;
  return null;
}

/** Whether a path is one of the public API's rate-limited routes (or none: an unknown route is refused alike). */
export const isRateLimited = (path: string): boolean => path.startsWith('/v3/') && path !== OPENAPI_PATH;

/** A request target's path: what comes before its query. The routers match it in its own letter case. */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** What the door reads of a request: its method, target and headers. */
export interface DoorRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/** A request the door answers itself. */
export interface DoorRefusal {
  reason: RefusalReason;
  /** What its error's answer depends on: refusals of one key are answered alike. */
  key: string;
  /** Its error (apiErrors), made only when the answer of its key is not kept: an Error costs a stack trace. */
  error(): ApiError;
  /** The RateLimit-* headers of a 429. */
  headers: Record<string, string>;
  /** Whether the connection closes after the answer, so that the request's body is never read. */
  close: boolean;
  /** The account of a valid token over its account's limit. */
  accountId: string | null;
}

/**
 * The refusal the door answers a request with, or null for one that goes on to Koa.
 * `clientIp`: the request's ctx.ip, asked only for a public API request.
 */
export function refusalOf(
  request: DoorRequest,
  clientIp: () => string,
  refusalFromMemory: AccountAccess['refusalFromMemory'],
): DoorRefusal | null {
  const path = pathOf(request.url);
  const limit = bodyLimitOf(request.method, path);
  const declared = request.headers['content-length'];
  if (limit !== null && declared !== undefined && Number(declared) > limit)
    return {
      reason: 'body_too_large',
      key: `413 ${limit}`,
      error: () => apiErrors.payloadTooLarge(limit),
      headers: {},
      close: true,
      accountId: null,
    };
  if (!isRateLimited(path)) return null;
  const refused = refusalFromMemory(bearerToken(request.headers.authorization), clientIp());
  if (refused === null) return null;
  const { limit: over, decision } = refused;
  return {
    reason: over === 'account' ? 'account_rate_limit' : 'address_rate_limit',
    key: `429 ${over} ${decision.resetSeconds}`,
    error: () => apiErrors.rateLimited(decision.resetSeconds, over),
    headers: rateLimitHeaders(decision),
    // A body of unknown length (chunked) would be read to its end to reach the next request.
    close: request.headers['transfer-encoding'] !== undefined,
    accountId: refused.accountId,
  };
}

/**
 * The answer to a refusal: Koa's headers for it, in Koa's order (request id, RateLimit-*, the
 * error's), and the envelope; `answer`: its error's, if kept.
 */
export function refusalAnswer(refusal: DoorRefusal, requestId: string, answer = errorAnswer(refusal.error())): ErrorAnswer {
  const { status, headers, body } = answer;
  return {
    status,
    headers: {
      'X-Request-Id': requestId,
      ...refusal.headers,
      ...headers,
      'Content-Length': String(Buffer.byteLength(body)),
      ...(refusal.close ? { Connection: 'close' } : {}),
    },
    body,
  };
}

/**
 * ctx.ip without a context: Koa's own getter, on a request made from the app's prototype as
 * Koa makes one, so that the app's proxy settings (TRUST_PROXY_HOPS) give the same address.
 */
function koaIp(app: Koa<ApiState>, req: IncomingMessage): string {
  const request = Object.create(app.request) as Koa.Request;
  request.app = app;
  request.req = req;
  return request.ip;
}

/** Error answers kept at most: a key is a status and a limit, or a limit and the seconds to wait, fewer than a window's. */
const KEPT_ANSWERS = 1000;

/** The error answers made so far, by key, so that a flood's refusals make none. */
function keptAnswers(): (refusal: DoorRefusal) => ErrorAnswer {
  const kept = new Map<string, ErrorAnswer>();
  return (refusal) => {
    let answer = kept.get(refusal.key);
    if (answer === undefined) {
      if (kept.size >= KEPT_ANSWERS) kept.clear();
      answer = errorAnswer(refusal.error());
      kept.set(refusal.key, answer);
    }
    return answer;
  };
}

export interface FrontDoor {
  /** The server's request handler. */
  handle: RequestListener;
  /**
   * The server's `checkContinue` handler, for a request that sent `Expect: 100-continue`: one the
   * door refuses is answered without `100 Continue`, so its client never sends the body.
   */
  handleContinue: RequestListener;
  /** Writes the last summary of refusals. */
  stop(): void;
}

export function createFrontDoor(
  app: Koa<ApiState>,
  { access, logger }: { access: Pick<AccountAccess, 'refusalFromMemory'>; logger: Logger },
): FrontDoor {
  const next = app.callback();
  const refusals = createRefusalLog<RefusalReason>(logger, { msg: 'requests refused', level: 'info' });
  const counters = refusalCounters();
  const answerOf = keptAnswers();
  /** Answers the request if the door refuses it, and says whether it did. */
  const refused = (req: IncomingMessage, res: ServerResponse): boolean => {
    let ip: string | undefined;
    const clientIp = () => (ip ??= koaIp(app, req));
    const refusal = refusalOf(req as DoorRequest, clientIp, access.refusalFromMemory);
    if (refusal === null) return false;
    const given = req.headers['x-request-id'];
    const requestId = requestIdOf(typeof given === 'string' ? given : undefined);
    const { status, headers, body } = refusalAnswer(refusal, requestId, answerOf(refusal));
    res.writeHead(status, headers).end(body);
    for (const counter of counters[refusal.reason]) counter.inc();
    refusals.count({ reason: refusal.reason, address: clientIp(), accountId: refusal.accountId });
    return true;
  };
  return {
    handle(req, res) {
      if (!refused(req, res)) void next(req, res);
    },
    handleContinue(req, res) {
      if (refused(req, res)) return;
      res.writeContinue();
      void next(req, res);
    },
    stop: () => refusals.flush(),
  };
}
