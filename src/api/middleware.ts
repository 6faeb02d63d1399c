import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Middleware, ParameterizedContext } from 'koa';
import getRawBody from 'raw-body';
import { UrlNotAllowedError } from '../delivery/url-policy';
import type { Logger } from '../logger';
import { metrics } from '../metrics';
import { nameRequestSpan } from '../tracing/spans';
import type { AuditActor } from '../objects';
import type { Scope } from '../scopes';
import { ApiError, apiErrors, errorAnswer } from './errors';
import { BackingServiceError } from '../errors';

declare module 'koa' {
  interface Request {
    /** The parsed JSON body; undefined when the request had none. */
    body?: unknown;
  }
}

export interface ApiState {
  requestId: string;
  /** The public API's caller, once its token is checked (account-access.ts): its account, and the token's id and scopes. */
  accountId?: string;
  tokenId?: string;
  scopes?: readonly Scope[];
  /** Who the audit log names for a change this request makes: the token and the client's address. */
  actor?: AuditActor;
}

export type ApiContext = ParameterizedContext<ApiState>;

/**
 * Every router's options: a path matches only in its own letter case. @koa/router matches a
 * route in any case but a prefix's middleware in its own, so /V3/webhooks once reached its
 * route past the token check of /v3; now it reaches nothing (404).
 */
export const ROUTER_OPTIONS = { sensitive: true } as const;

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** A request's id: the client's X-Request-Id when sane, else a new one. */
export function requestIdOf(given: string | undefined): string {
  return given !== undefined && REQUEST_ID.test(given) ? given : randomUUID();
}

/** Gives each request an id (kept from X-Request-Id when sane); logs and counts it when it ends. */
export function requestLog(logger: Logger): Middleware<ApiState> {
  return async (ctx, next) => {
    const started = performance.now();
    ctx.state.requestId = requestIdOf(ctx.get('X-Request-Id'));
    ctx.set('X-Request-Id', ctx.state.requestId);
    try {
      await next();
    } finally {
      const seconds = (performance.now() - started) / 1000;
      // The route template, never the raw path: ids in paths would make a label per webhook.
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? null;
      metrics.httpRequests.inc({ method: ctx.method, route: route ?? 'unmatched', status: ctx.status });
      metrics.httpDuration.observe({ method: ctx.method, route: route ?? 'unmatched' }, seconds);
      if (route !== null)
        nameRequestSpan(ctx.method, route, ctx.state.accountId === undefined ? {} : { 'account.id': ctx.state.accountId });
      logger.info({
        msg: 'request',
        requestId: ctx.state.requestId,
        method: ctx.method,
        route,
        status: ctx.status,
        durationMs: Math.round(seconds * 1000),
        accountId: ctx.state.accountId,
      });
    }
  };
}

// Connection failures of PostgreSQL (postgres.js codes, server shutting down) and Temporal (gRPC).
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  '57P01',
  '57P03',
]);
const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;

function isUnavailable(error: unknown): boolean {
  if (error instanceof BackingServiceError) return true;
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
    if (e.code === GRPC_UNAVAILABLE || e.code === GRPC_DEADLINE_EXCEEDED) return true;
  }
  return false;
}

function toApiError(error: unknown, logger: Logger, requestId: string): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof UrlNotAllowedError) return apiErrors.urlNotAllowed(error.reason, error.message);
  if (isUnavailable(error)) {
    logger.warn({ msg: 'backing service unavailable', requestId, err: error });
    return apiErrors.unavailable();
  }
  logger.error({ msg: 'unhandled error', requestId, err: error });
  return apiErrors.internal();
}

/** The one place where errors become the contract's envelope; nothing else leaks. */
export function errorEnvelope(logger: Logger): Middleware<ApiState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        // @koa/router leaves unknown routes at 404 and wrong methods at 405 (with Allow).
        if (ctx.status === 404) throw apiErrors.notFound();
        if (ctx.status === 405) throw apiErrors.methodNotAllowed();
      }
    } catch (caught) {
      const answer = errorAnswer(toApiError(caught, logger, ctx.state.requestId));
      ctx.status = answer.status;
      ctx.set(answer.headers);
      ctx.body = answer.body;
    }
  };
}

/**
 * Reads a JSON body of at most `limitBytes`. A request without a body passes with
 * `ctx.request.body` undefined; one with a body must be declared as JSON, unencoded.
 */
export function jsonBody(limitBytes: number): Middleware<ApiState> {
  return async (ctx, next) => {
    const declaredLength = ctx.request.length;
    const hasBody = (declaredLength ?? 0) > 0 || ctx.get('Transfer-Encoding') !== '';
    if (hasBody) {
      if (!ctx.is('application/json')) throw apiErrors.unsupportedMediaType();
      const encoding = ctx.get('Content-Encoding');
      if (encoding !== '' && encoding !== 'identity') throw apiErrors.unsupportedMediaType();
      if (declaredLength !== undefined && declaredLength > limitBytes) throw apiErrors.payloadTooLarge(limitBytes);
      let text: string;
      try {
        text = await getRawBody(ctx.req, { limit: limitBytes, length: declaredLength, encoding: 'utf8' });
      } catch (error) {
        if ((error as { type?: string }).type === 'entity.too.large') throw apiErrors.payloadTooLarge(limitBytes);
        throw apiErrors.malformedJson();
      }
      if (text.trim() !== '') {
        try {
          ctx.request.body = JSON.parse(text);
        } catch {
          throw apiErrors.malformedJson();
        }
      }
    }
    await next();
  };
}

/** The Bearer token of an Authorization header, if it holds one of a sane form. */
export function bearerToken(authorization: string | undefined): string | null {
  const match = /^Bearer ([A-Za-z0-9._~+/=-]{1,512})$/i.exec(authorization ?? '');
  return match ? match[1] : null;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Internal API: the one INTERNAL_API_TOKEN, compared in constant time (as fixed-length digests). */
export function authenticateInternal(internalApiToken: string): Middleware<ApiState> {
  const expected = sha256(internalApiToken);
  return async (ctx, next) => {
    const token = bearerToken(ctx.get('Authorization'));
    if (token === null || !timingSafeEqual(sha256(token), expected)) throw apiErrors.unauthorized();
    await next();
  };
}
