// A webhook's credentials for its receiver (docs/api.md, "Receivers behind gateways"): static
// headers or OAuth2 client credentials, and a client certificate. Checked past their schema
// here, answered only as views that hold no credential, and kept sealed together as signing
// secrets are (src/secret-keys.ts), for "{webhook id}:credentials": a sealed signing secret
// never opens as credentials, nor the other way round.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import type { AuditDetails, ClientCertificateView, ReceiverAuthView, ValidationIssue } from '../objects';
import type { SealedSecret, SecretBox } from '../secret-keys';
import { UrlNotAllowedError, parseWebhookUrl } from './url-policy';

export interface HeadersAuth {
  type: 'headers';
  headers: Record<string, string>;
}

export interface OAuth2Auth {
  type: 'oauth2';
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
  audience?: string;
}

export type ReceiverAuth = HeadersAuth | OAuth2Auth;

export interface ClientCertificate {
  /** PEM: the certificate, then any intermediates. */
  certificate: string;
  /** PEM: its private key. */
  privateKey: string;
}

/** What a webhook's sealed credentials hold. */
export interface ReceiverCredentials {
  auth: ReceiverAuth | null;
  clientCertificate: ClientCertificate | null;
}

/** What a request sets: absent (undefined) keeps what the webhook has, null removes it. */
export interface CredentialsChange {
  auth?: ReceiverAuth | null;
  clientCertificate?: ClientCertificate | null;
}

export const NO_CREDENTIALS: ReceiverCredentials = { auth: null, clientCertificate: null };

/** RFC 9110 §5.6.2: a header name is a token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Names our own requests set, or that HTTP/1.1 framing owns (undici refuses to send
 * Keep-Alive, Upgrade and Expect), compared in lower case; and every SVC-* name.
 */
const RESERVED_NAMES = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'user-agent',
  'keep-alive',
  'upgrade',
  'expect',
]);

/** Whether a request sets any credentials. */
export function isChange(change: CredentialsChange): boolean {
  return change.auth !== undefined || change.clientCertificate !== undefined;
}

/** The change a request body (already valid against its schema) makes, its token URL normalised. */
export function credentialsChangeOf(body: { auth?: unknown; clientCertificate?: unknown }): CredentialsChange {
  const change: CredentialsChange = {};
  if (body.auth !== undefined) {
    const auth = body.auth as ReceiverAuth | null;
    change.auth = auth?.type === 'oauth2' ? { ...auth, tokenUrl: normalisedUrl(auth.tokenUrl) } : auth;
  }
  if (body.clientCertificate !== undefined) change.clientCertificate = body.clientCertificate as ClientCertificate | null;
  return change;
}

function normalisedUrl(raw: string): string {
  try {
    return parseWebhookUrl(raw).href;
  } catch {
    return raw; // credentialIssues names what is wrong with it
  }
}

/**
 * What is wrong with the credentials a body sets, past its schema: header names (tokens, not
 * reserved, each once whatever its case), the token URL (https, no user name or password), the
 * certificate and key (PEM that parses, a key that is the certificate's).
 */
export function credentialIssues(change: CredentialsChange): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const { auth, clientCertificate } = change;
  if (auth?.type === 'headers') {
    const seen = new Set<string>();
    for (const name of Object.keys(auth.headers)) {
      const path = `/auth/headers/${escapePointer(name)}`;
      const lower = name.toLowerCase();
      if (!TOKEN.test(name)) issues.push({ path, message: 'must be a header name (an RFC 9110 token)' });
      else if (RESERVED_NAMES.has(lower) || lower.startsWith('svc-')) issues.push({ path, message: 'is a header the service sets itself' });
      else if (seen.has(lower)) issues.push({ path, message: 'names a header already given (names are case-insensitive)' });
      seen.add(lower);
    }
  }
  if (auth?.type === 'oauth2') {
    try {
      parseWebhookUrl(auth.tokenUrl);
    } catch (error) {
      issues.push({ path: '/auth/tokenUrl', message: error instanceof UrlNotAllowedError ? error.message : 'is not a URL' });
    }
  }
  if (clientCertificate) issues.push(...certificateIssues(clientCertificate));
  return issues;
}

function certificateIssues({ certificate, privateKey }: ClientCertificate): ValidationIssue[] {
  let parsed: X509Certificate;
  try {
    parsed = new X509Certificate(certificate);
  } catch {
    return [{ path: '/clientCertificate/certificate', message: 'must be a PEM certificate' }];
  }
  let key;
  try {
    key = createPrivateKey(privateKey);
  } catch {
    return [{ path: '/clientCertificate/privateKey', message: 'must be an unencrypted PEM private key' }];
  }
  if (!parsed.checkPrivateKey(key)) {
    return [{ path: '/clientCertificate/privateKey', message: "is not the certificate's private key" }];
  }
  return [];
}

/** RFC 6901: a name as one step of a JSON pointer. */
function escapePointer(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** `auth` as answered: the kind and what names it, never a value or the client secret. */
export function authView(auth: ReceiverAuth | null): ReceiverAuthView {
  if (auth === null) return null;
  if (auth.type === 'headers') return { type: 'headers', headerNames: Object.keys(auth.headers) };
  return { type: 'oauth2', tokenUrl: auth.tokenUrl, clientId: auth.clientId, scope: auth.scope ?? null, audience: auth.audience ?? null };
}

/** `clientCertificate` as answered: its subject, expiry and fingerprint (of a certificate credentialIssues accepted). */
export function certificateView(certificate: ClientCertificate | null): ClientCertificateView {
  if (certificate === null) return null;
  const parsed = new X509Certificate(certificate.certificate);
  return {
    subject: parsed.subject.split('\n').join(', '),
    notAfter: new Date(parsed.validTo).toISOString(),
    fingerprintSha256: parsed.fingerprint256,
  };
}

/** Credentials as a row keeps them: what is answered of them, in clear, and the credentials, sealed (null: none). */
export interface StoredCredentials {
  auth: ReceiverAuthView;
  clientCertificate: ClientCertificateView;
  sealed: SealedSecret | null;
}

export function storedCredentials(box: SecretBox, credentials: ReceiverCredentials, webhookId: string): StoredCredentials {
  return {
    auth: authView(credentials.auth),
    clientCertificate: certificateView(credentials.clientCertificate),
    sealed: sealCredentials(box, credentials, webhookId),
  };
}

/** Which of the two a change sets. */
export function changed(change: CredentialsChange): { auth: boolean; clientCertificate: boolean } {
  return { auth: change.auth !== undefined, clientCertificate: change.clientCertificate !== undefined };
}

/** What the audit log records of credentials set: the kind and the header names, the certificate's view; never a credential. */
export function auditedCredentials(
  stored: Pick<StoredCredentials, 'auth' | 'clientCertificate'>,
  which: { auth: boolean; clientCertificate: boolean },
): Pick<AuditDetails, 'auth' | 'clientCertificate'> {
  const details: Pick<AuditDetails, 'auth' | 'clientCertificate'> = {};
  if (which.auth) {
    const { auth } = stored;
    details.auth = auth === null ? null : auth.type === 'headers' ? { type: 'headers', headerNames: auth.headerNames } : { type: 'oauth2' };
  }
  if (which.clientCertificate) details.clientCertificate = stored.clientCertificate;
  return details;
}

/** The credentials after `change`. */
export function applyChange(current: ReceiverCredentials, change: CredentialsChange): ReceiverCredentials {
  return {
    auth: change.auth === undefined ? current.auth : change.auth,
    clientCertificate: change.clientCertificate === undefined ? current.clientCertificate : change.clientCertificate,
  };
}

/** The associated data credentials are sealed with: never a webhook id alone, which seals its signing secret. */
export const credentialsSealedFor = (webhookId: string): string => `${webhookId}:credentials`;

/** The credentials sealed for the webhook; null when there are none. */
export function sealCredentials(box: SecretBox, credentials: ReceiverCredentials, webhookId: string): SealedSecret | null {
  if (credentials.auth === null && credentials.clientCertificate === null) return null;
  return box.seal(JSON.stringify(credentials), credentialsSealedFor(webhookId));
}

export function openCredentials(box: SecretBox, sealed: SealedSecret | null, webhookId: string): ReceiverCredentials {
  if (sealed === null) return NO_CREDENTIALS;
  return JSON.parse(box.open(sealed, credentialsSealedFor(webhookId))) as ReceiverCredentials;
}
