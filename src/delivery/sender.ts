// The one outbound HTTP client (pings and deliveries), as docs/api.md decides: one attempt,
// https only, checked addresses only, no redirects, one overall deadline, body capped; and the
// receiver's credentials presented, when its webhook has any. It says what was sent and what
// came back, for the delivery log only.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { Agent, buildConnector, request, type Dispatcher } from 'undici';
import type { DeliveryError, DeliveryResult, ReceivedResponse, SentRequest } from '../objects';
import type { ClientCertificate } from './receiver-credentials';
import { KEPT_BODY_BYTES, captureResponse, type ResponseCapture } from './response-capture';
import {
  type AddressPolicy,
  type Resolver,
  UrlNotAllowedError,
  parseWebhookUrl,
  resolveAllowedAddresses,
  systemResolver,
} from './url-policy';

/**
 * One POST: its result, which workflows may see, and what was sent and what came back, which
 * only the delivery log keeps (the receiver's text never enters a Temporal payload).
 */
export interface HttpExchange {
  result: DeliveryResult;
  request: SentRequest;
  /** Null when no response arrived (no status line and headers within the deadline). */
  response: ReceivedResponse | null;
}

/**
 * What a request presents besides its signature (docs/api.md, "Receivers behind gateways"):
 * headers, sent but logged with their values redacted, and for mutual TLS the pool whose
 * handshakes present the client certificate.
 */
export interface Presented {
  /** Lower-case names, as the service's own. */
  headers: Record<string, string> | null;
  dispatcher: Dispatcher | null;
}

/** A webhook's credentials as a request presents them (src/delivery/credential-presenter.ts). */
export interface RequestCredentials {
  /** What to present, within `signal`; rejects when that cannot be had, and nothing is sent (`auth_failed`). */
  present(signal: AbortSignal): Promise<Presented>;
  /** The receiver answered 401 to `presented`: whether to present afresh and send once more. */
  refused(presented: Presented): boolean;
}

export interface HttpSender {
  post(url: string, body: string, headers: Record<string, string>, credentials?: RequestCredentials): Promise<HttpExchange>;
  close(): Promise<void>;
}

export interface HttpSenderOptions {
  timeoutMs: number;
  policy: AddressPolicy;
  resolve?: Resolver;
  /** Extra trusted CA PEMs, added to Node's root certificates (NODE_EXTRA_CA_CERTS also works). */
  ca?: string[];
  userAgent: string;
}

/** Connection pools whose every connection goes to a checked address (the SSRF policy at each dial). */
export interface Dialer {
  /** The pool every request uses unless it presents a client certificate. */
  readonly agent: Dispatcher;
  /** A pool of its own whose handshakes present `certificate`, dialled the same way; its owner closes it. */
  clientAgent(certificate: ClientCertificate): Agent;
}

const MAX_RESPONSE_BYTES = 64 * 1024;

/** What a header's value is logged as when it carries a credential. */
export const REDACTED = '[redacted]';

export function createDialer({ timeoutMs, policy, resolve = systemResolver, ca }: Omit<HttpSenderOptions, 'userAgent'>): Dialer {
  const trust = trustOptions(ca);

  // Every new connection goes through here, IP literals included (a `lookup` hook never
  // sees those). The name is resolved exactly once and the socket goes to the address
  // that was checked, so a second DNS answer cannot redirect us (DNS rebinding).
  const checkedConnector = (dialTls: buildConnector.connector): buildConnector.connector => {
    return (target, callback) => {
      // The lookup is part of the dial: bounded like the rest of it (buildConnector's own
      // timeout starts only once we call dialTls).
      withTimeout(resolveAllowedAddresses(target.hostname, policy, resolve), timeoutMs, () => connectTimeout(target.hostname))
        .then(([address]) => {
          const isLiteral = net.isIP(target.hostname) !== 0;
          // servername keeps SNI and certificate verification on the name, not the address.
          dialTls({ ...target, hostname: address, servername: isLiteral ? undefined : target.hostname }, callback);
        })
        .catch((err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), null));
    };
  };
  const pool = (clientTls: { cert?: string; key?: string }) =>
    new Agent({
      connect: checkedConnector(buildConnector({ timeout: timeoutMs, ...trust, ...clientTls })),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });

  return {
    agent: pool({}),
    clientAgent: ({ certificate, privateKey }) => pool({ cert: certificate, key: privateKey }),
  };
}

export function createHttpSender(options: HttpSenderOptions): HttpSender & { readonly dialer: Dialer } {
  const { timeoutMs, userAgent } = options;
  const dialer = createDialer(options);

  async function post(url: string, body: string, headers: Record<string, string>, credentials?: RequestCredentials): Promise<HttpExchange> {
    const started = performance.now();
    let sent = sentRequest(url, body, headers, userAgent);
    let received: ResponseCapture | null = null;
    const exchange = (error: DeliveryError | null, statusCode: number | null): HttpExchange =>
      exchangeOf(sent, started, error, statusCode, received?.response() ?? null);

    let target: URL;
    try {
      target = parseWebhookUrl(url); // the API validated it already; this is the last line of defence
    } catch {
      return exchange('blocked_address', null);
    }

    // The only reliable bound, on everything the attempt does (a token fetched, the POST, once
    // more after a 401): undici's body timeout is an idle timer and its headers timeout can be
    // defeated by endless 1xx responses.
    const signal = AbortSignal.timeout(timeoutMs);
    // undici acts on an abort only once the request has a connection: a dial that hangs
    // (a slow DNS answer, a server that accepts and never completes the handshake) would
    // outlive the deadline. Whichever settles later is handled by race() and then ignored.
    const deadline = rejectOnAbort(signal);
    const present = async (from: RequestCredentials): Promise<Presented | null> => {
      try {
        const presented = await Promise.race([from.present(signal), deadline.promise]);
        if (presented.headers) sent = { ...sent, headers: { ...sent.headers, ...redacted(presented.headers) } };
        return presented;
      } catch {
        return null;
      }
    };
    const send = (presented: Presented | null) => {
      const requestHeaders = presented?.headers ? { ...sent.headers, ...presented.headers } : sent.headers;
      const dispatcher = presented?.dispatcher ?? dialer.agent;
      return Promise.race([request(target, { method: 'POST', body, headers: requestHeaders, dispatcher, signal }), deadline.promise]);
    };

    let statusCode: number | null = null;
    try {
      let presented: Presented | null = null;
      if (credentials) {
        presented = await present(credentials);
        if (presented === null) return exchange('auth_failed', null);
      }
      let response = await send(presented);
      if (response.statusCode === 401 && credentials && presented && credentials.refused(presented)) {
        // Nothing of it is kept (the answer to the second try is); read off, its connection serves again.
        await response.body.dump({ limit: KEPT_BODY_BYTES }).catch(() => {});
        presented = await present(credentials);
        if (presented === null) return exchange('auth_failed', null);
        response = await send(presented);
      }
      statusCode = response.statusCode;
      received = captureResponse(statusCode, response.headers);
      if (statusCode < 200 || statusCode >= 300) {
        // What the receiver said, up to what is kept, within the same deadline; a body cut
        // off by it, or by the connection, leaves the failure what the status made it.
        await readAtMost(response.body, KEPT_BODY_BYTES + 1, received).catch(() => {});
        return exchange(statusError(statusCode), statusCode);
      }
      await readAtMost(response.body, MAX_RESPONSE_BYTES, received);
      return exchange(null, statusCode);
    } catch (err) {
      return exchange(classifyError(err, signal), statusCode);
    } finally {
      deadline.stop();
    }
  }

  return { post, dialer, close: () => dialer.agent.close() };
}

/** Presented headers as the delivery log shows them, made once per set of them: their names, values redacted. */
const redactedCopies = new WeakMap<Record<string, string>, Record<string, string>>();
function redacted(headers: Record<string, string>): Record<string, string> {
  let copy = redactedCopies.get(headers);
  if (copy === undefined) {
    copy = Object.fromEntries(Object.keys(headers).map((name) => [name, REDACTED]));
    redactedCopies.set(headers, copy);
  }
  return copy;
}

/** What an attempt came to: what was sent, since `started` (performance.now()), and what came back. */
export function exchangeOf(
  request: SentRequest,
  started: number,
  error: DeliveryError | null,
  statusCode: number | null,
  response: ReceivedResponse | null,
): HttpExchange {
  return {
    result: { delivered: error === null, statusCode, durationMs: Math.round(performance.now() - started), error },
    request,
    response,
  };
}

/** The failure a status is: none for a 2xx, `redirect` for a 3xx (never followed), else `non_2xx`. */
export function statusError(statusCode: number): DeliveryError | null {
  if (statusCode >= 200 && statusCode < 300) return null;
  return statusCode >= 300 && statusCode < 400 ? 'redirect' : 'non_2xx';
}

/** What a POST of `body` with `headers` sends: the JSON body's type and our user agent added. */
export function sentRequest(url: string, body: string, headers: Record<string, string>, userAgent: string): SentRequest {
  return { url, headers: { ...lowerCaseKeys(headers), 'content-type': 'application/json', 'user-agent': userAgent }, body };
}

/** A promise that rejects with the signal's reason when it aborts; stop() lets go of the signal. */
function rejectOnAbort(signal: AbortSignal): { promise: Promise<never>; stop(): void } {
  let onAbort = () => {};
  const promise = new Promise<never>((_, reject) => {
    // An aborted signal's reason is the error it was aborted with (a TimeoutError here).
    onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return { promise, stop: () => signal.removeEventListener('abort', onAbort) };
}

/**
 * Reads up to `limit` bytes, keeping the first of them in `capture`, and tells it when the
 * body ends; leaving the loop early destroys the body (and its connection).
 */
export async function readAtMost(body: AsyncIterable<Buffer>, limit: number, capture: ResponseCapture): Promise<void> {
  let received = 0;
  for await (const chunk of body) {
    capture.keep(chunk);
    received += chunk.length;
    if (received >= limit) return;
  }
  capture.end();
}

function withTimeout<T>(promise: Promise<T>, ms: number, error: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

function connectTimeout(hostname: string): Error {
  return Object.assign(new Error(`Looking up ${hostname} timed out`), { code: 'UND_ERR_CONNECT_TIMEOUT' });
}

function trustOptions(extraCas: string[] | undefined): { ca?: string[] } {
  if (!extraCas || extraCas.length === 0) return {}; // Node's default store, NODE_EXTRA_CA_CERTS included
  // An explicit `ca` replaces the default store, NODE_EXTRA_CA_CERTS too: rebuild it.
  const ca = [...tls.rootCertificates];
  const extraFile = process.env.NODE_EXTRA_CA_CERTS;
  if (extraFile) {
    try {
      ca.push(readFileSync(extraFile, 'utf8'));
    } catch {
      // Node itself only warns about an unreadable file; so do we, by ignoring it.
    }
  }
  return { ca: [...ca, ...extraCas] };
}

export function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

const TLS_ERROR_CODES = new Set([
  'EPROTO',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_CHAIN_TOO_LONG',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'HOSTNAME_MISMATCH',
]);

const TIMEOUT_ERROR_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** What went wrong with a request that got no response; `signal` is its deadline's. */
export function classifyError(err: unknown, signal: AbortSignal): DeliveryError {
  if (signal.aborted) return 'timeout';
  if (err instanceof UrlNotAllowedError) {
    return err.reason === 'blocked_address' ? 'blocked_address' : 'connection'; // invalid_host: DNS failed
  }
  const code = errorCode(err) ?? errorCode((err as { cause?: unknown } | null)?.cause);
  if (code === undefined) return 'connection';
  if (TIMEOUT_ERROR_CODES.has(code)) return 'timeout';
  if (TLS_ERROR_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_')) return 'tls';
  return 'connection';
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
