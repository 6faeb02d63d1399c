// A worker's receivers' credentials, ready to present (docs/api.md, "Receivers behind
// gateways"): per webhook, opened once while its sealed bytes are unchanged, with its OAuth2
// token and its client certificate's connection pool. Kept in this process only: never in
// Temporal, never in PostgreSQL in clear. A webhook without credentials never comes here.
import { request, type Agent, type Dispatcher } from 'undici';
import type { Logger } from '../logger';
import { KeptWhileSealed, type SealedSecret, type SecretBox } from '../secret-keys';
import { openCredentials, type OAuth2Auth } from './receiver-credentials';
import { lowerCaseKeys, type Dialer, type Presented, type RequestCredentials } from './sender';
import { parseWebhookUrl, UrlNotAllowedError } from './url-policy';

export interface CredentialPresenter {
  /** The webhook's credentials, sealed as `sealed`, ready to present: the same while they are unchanged. */
  credentialsFor(webhookId: string, sealed: SealedSecret): RequestCredentials;
  close(): Promise<void>;
}

export interface CredentialPresenterOptions {
  dialer: Dialer;
  secrets: SecretBox;
  userAgent: string;
  /** Where a token that cannot be had is said, once per attempt, without any credential. */
  logger: Logger;
  /** Webhooks whose credentials (and tokens, and pools) are kept, those used last. */
  maxWebhooks: number;
}

/** A token is used until this long before it expires. */
export const TOKEN_EXPIRY_MARGIN_MS = 30_000;
/** How long a token whose answer gives no `expires_in` is taken to last (RFC 6749 §5.1 leaves it to us): a 401 replaces it sooner. */
export const TOKEN_DEFAULT_LIFETIME_MS = 3600_000;
/** The most of a token endpoint's answer that is read. */
const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;
/** What may follow `Bearer ` (RFC 6750 §2.1's b64token, and then some): visible ASCII only. */
const SENDABLE_TOKEN = /^[\x21-\x7e]+$/;

/** Why a token could not be had; its message names no credential. */
export class TokenError extends Error {
  override readonly name = 'TokenError';
}

interface Entry {
  credentials: RequestCredentials;
  /** The client certificate's pool, closed when the entry goes. */
  agent: Agent | null;
}

export function createCredentialPresenter({
  dialer,
  secrets,
  userAgent,
  logger,
  maxWebhooks,
}: CredentialPresenterOptions): CredentialPresenter {
  // Changed (or re-sealed under another key), or not used for long: its pool goes, with any token.
  const entries = new KeptWhileSealed<Entry>(maxWebhooks, (entry) => void entry.agent?.close());

  function open(webhookId: string, sealed: SealedSecret): Entry {
    const { auth, clientCertificate } = openCredentials(secrets, sealed, webhookId);
    const agent = clientCertificate ? dialer.clientAgent(clientCertificate) : null;
    if (auth?.type === 'oauth2') {
      const fetcher = { dispatcher: agent ?? dialer.agent, userAgent, logger: logger.child({ webhookId }) };
      return { agent, credentials: oauth2Credentials(auth, fetcher) };
    }
    // Static headers, a certificate, or both: the same every time.
    const presented = Promise.resolve({ headers: auth ? lowerCaseKeys(auth.headers) : null, dispatcher: agent });
    return { agent, credentials: { present: () => presented, refused: () => false } };
  }

  return {
    credentialsFor: (webhookId, sealed) => entries.get(webhookId, sealed, () => open(webhookId, sealed)).credentials,
    async close() {
      const agents = entries.takeAll().flatMap((entry) => (entry.agent ? [entry.agent] : []));
      await Promise.all(agents.map((agent) => agent.close()));
    },
  };
}

/**
 * The client credentials grant (RFC 6749 §4.4): a token fetched when none is held or it is
 * within TOKEN_EXPIRY_MARGIN_MS of expiring, by one request however many deliveries wait for
 * it, and fetched again when the receiver answers 401 to the token held.
 */
function oauth2Credentials(auth: OAuth2Auth, fetcher: TokenFetcher): RequestCredentials {
  let held: { presented: Promise<Presented>; value: Presented; expiresAt: number } | null = null;
  let fetching: Promise<Presented> | null = null;

  return {
    present(signal) {
      if (held && Date.now() < held.expiresAt) return held.presented;
      fetching ??= fetchToken(auth, fetcher, signal)
        .then(({ accessToken, lifetimeMs }) => {
          const value: Presented = { headers: { authorization: `Bearer ${accessToken}` }, dispatcher: fetcher.dispatcher };
          held = { value, presented: Promise.resolve(value), expiresAt: Date.now() + lifetimeMs - TOKEN_EXPIRY_MARGIN_MS };
          return value;
        })
        .catch((err: unknown) => {
          // The delivery says only auth_failed: the owner's operator reads here why.
          fetcher.logger.warn({ msg: 'no OAuth2 token for the webhook', tokenUrl: new URL(auth.tokenUrl).origin, reason: whyNoToken(err) });
          throw err;
        })
        .finally(() => {
          fetching = null;
        });
      return fetching;
    },
    refused(presented) {
      // The token held drew the 401: it goes, and the next present() fetches one. A token
      // replaced meanwhile by another delivery's 401 is not fetched again: that one is tried.
      if (held?.value === presented) held = null;
      return true;
    },
  };
}

/** What fetching a webhook's tokens takes: its pool (its client certificate's, if it has one). */
interface TokenFetcher {
  dispatcher: Dispatcher;
  userAgent: string;
  logger: Logger;
}

/** Why no token came, naming no credential: our own words, or the kind of error that ended the request. */
function whyNoToken(err: unknown): string {
  if (err instanceof TokenError || err instanceof UrlNotAllowedError) return err.message;
  if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError')) return 'no answer within the delivery deadline';
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'unknown';
}

async function fetchToken(
  { tokenUrl, clientId, clientSecret, scope, audience }: OAuth2Auth,
  { dispatcher, userAgent }: TokenFetcher,
  signal: AbortSignal,
): Promise<{ accessToken: string; lifetimeMs: number }> {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (scope !== undefined) form.set('scope', scope);
  if (audience !== undefined) form.set('audience', audience);
  // client_secret_basic (RFC 6749 §2.3.1): each form-encoded, then joined and base64-encoded.
  const basic = Buffer.from(`${formEncoded(clientId)}:${formEncoded(clientSecret)}`).toString('base64');
  const response = await request(parseWebhookUrl(tokenUrl), {
    method: 'POST',
    body: form.toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
      authorization: `Basic ${basic}`,
      'user-agent': userAgent,
    },
    dispatcher,
    signal,
  });
  if (response.statusCode < 200 || response.statusCode >= 300) {
    await response.body.dump({ limit: MAX_TOKEN_RESPONSE_BYTES }).catch(() => {});
    throw new TokenError(`the token endpoint answered ${response.statusCode}`);
  }
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > MAX_TOKEN_RESPONSE_BYTES) throw new TokenError('the token endpoint answered more than is read');
    chunks.push(chunk);
  }
  return tokenOf(Buffer.concat(chunks).toString('utf8'));
}

/** The token and how long it lasts, from a token endpoint's answer (RFC 6749 §5.1); TokenError for anything else. */
export function tokenOf(text: string): { accessToken: string; lifetimeMs: number } {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new TokenError('the token endpoint answered something other than JSON');
  }
  const { access_token: accessToken, token_type: tokenType, expires_in: expiresIn } = (answer ?? {}) as Record<string, unknown>;
  if (typeof accessToken !== 'string' || !SENDABLE_TOKEN.test(accessToken)) throw new TokenError('the answer holds no usable access_token');
  if (tokenType !== undefined && (typeof tokenType !== 'string' || tokenType.toLowerCase() !== 'bearer')) {
    throw new TokenError('the answer is not a bearer token');
  }
  const seconds = typeof expiresIn === 'string' && /^\d+$/.test(expiresIn) ? Number(expiresIn) : expiresIn;
  if (seconds === undefined) return { accessToken, lifetimeMs: TOKEN_DEFAULT_LIFETIME_MS };
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0)
    throw new TokenError('the answer has an invalid expires_in');
  return { accessToken, lifetimeMs: seconds * 1000 };
}

/** application/x-www-form-urlencoded, as RFC 6749 §2.3.1 encodes a client's id and secret. */
function formEncoded(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}
