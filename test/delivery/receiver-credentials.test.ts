// Receivers' credentials without the stack: what the API refuses past the schema, what is
// answered and audited of them (never a credential), how they are sealed, and what a token
// endpoint's answer must be.
import { X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { TokenError, tokenOf, TOKEN_DEFAULT_LIFETIME_MS } from '../../src/delivery/credential-presenter';
import {
  applyChange,
  auditedCredentials,
  changed,
  credentialIssues,
  credentialsChangeOf,
  openCredentials,
  sealCredentials,
  storedCredentials,
  type ClientCertificate,
} from '../../src/delivery/receiver-credentials';
import { fixedSecretBox } from '../../scripts/lib/fixed-secret-keys';
import { createTestCa, issueClientCert } from '../../scripts/lib/tls';

let certificate: ClientCertificate;
let stranger: ClientCertificate;
beforeAll(async () => {
  const ca = await createTestCa();
  const [one, other] = await Promise.all([issueClientCert(ca, 'one.example'), issueClientCert(ca, 'other')]);
  certificate = { certificate: one.cert, privateKey: one.key };
  stranger = { certificate: other.cert, privateKey: other.key };
});

const headers = (entries: Record<string, string>) => ({ auth: { type: 'headers' as const, headers: entries } });

describe('credentialIssues', () => {
  it('accepts tokens that are not reserved, each once', () => {
    expect(credentialIssues(headers({ 'X-Api-Key': 'v', Authorization: 'Basic eA==', "x!#$%&'*+.^_`|~": 'v' }))).toEqual([]);
  });

  it.each([
    ['Bad Name', 'must be a header name (an RFC 9110 token)'],
    ['X:Key', 'must be a header name (an RFC 9110 token)'],
    ['', 'must be a header name (an RFC 9110 token)'],
    ['Content-Length', 'is a header the service sets itself'],
    ['cOnNeCtIoN', 'is a header the service sets itself'],
    ['Transfer-Encoding', 'is a header the service sets itself'],
    ['Keep-Alive', 'is a header the service sets itself'],
    ['SVC-Delivery', 'is a header the service sets itself'],
    ['svc-anything-new', 'is a header the service sets itself'],
  ])('refuses the name %j', (name, message) => {
    expect(credentialIssues(headers({ [name]: 'v' }))).toEqual([{ path: `/auth/headers/${name}`, message }]);
  });

  it('refuses a name given twice in two cases, at the second, and escapes a path', () => {
    expect(credentialIssues(headers({ 'X-Key': 'a', 'x-KEY': 'b' }))).toEqual([
      { path: '/auth/headers/x-KEY', message: 'names a header already given (names are case-insensitive)' },
    ]);
    expect(credentialIssues(headers({ 'a/b~': 'v' }))[0].path).toBe('/auth/headers/a~1b~0');
  });

  it('refuses a token URL that is not https or carries a user name', () => {
    const oauth2 = (tokenUrl: string) => ({ auth: { type: 'oauth2' as const, tokenUrl, clientId: 'c', clientSecret: 's' } });
    expect(credentialIssues(oauth2('https://auth.example/token'))).toEqual([]);
    for (const url of ['http://auth.example/token', 'https://u:p@auth.example/token', 'not a url', 'file:///etc/passwd']) {
      expect(credentialIssues(oauth2(url)).map((issue) => issue.path)).toEqual(['/auth/tokenUrl']);
    }
  });

  it('accepts a certificate with its own key, and refuses garbage, an encrypted key or another key', () => {
    expect(credentialIssues({ clientCertificate: certificate })).toEqual([]);
    const issue = (clientCertificate: ClientCertificate) => credentialIssues({ clientCertificate });
    expect(issue({ ...certificate, certificate: 'nope' })[0].path).toBe('/clientCertificate/certificate');
    expect(issue({ ...certificate, privateKey: 'nope' })[0].path).toBe('/clientCertificate/privateKey');
    expect(issue({ ...certificate, privateKey: stranger.privateKey })).toEqual([
      { path: '/clientCertificate/privateKey', message: "is not the certificate's private key" },
    ]);
    expect(credentialIssues({ clientCertificate: null, auth: null })).toEqual([]);
  });
});

describe('what is answered, audited and sealed', () => {
  it('answers and audits names, never a value, a secret or a key', () => {
    const box = fixedSecretBox();
    const change = credentialsChangeOf({
      auth: { type: 'oauth2', tokenUrl: 'HTTPS://Auth.Example:443/token', clientId: 'id', clientSecret: 'the-secret', scope: 's' },
      clientCertificate: certificate,
    });
    const stored = storedCredentials(box, applyChange({ auth: null, clientCertificate: null }, change), 'wh_1');
    expect(stored.auth).toEqual({ type: 'oauth2', tokenUrl: 'https://auth.example/token', clientId: 'id', scope: 's', audience: null });
    const parsed = new X509Certificate(certificate.certificate);
    expect(stored.clientCertificate).toEqual({
      subject: 'CN=one.example',
      notAfter: new Date(parsed.validTo).toISOString(),
      fingerprintSha256: parsed.fingerprint256,
    });
    expect(auditedCredentials(stored, changed(change))).toEqual({ auth: { type: 'oauth2' }, clientCertificate: stored.clientCertificate });
    expect(auditedCredentials(stored, changed({ auth: null }))).toEqual({ auth: { type: 'oauth2' } });
    const shown = JSON.stringify([stored.auth, stored.clientCertificate, auditedCredentials(stored, changed(change))]);
    expect(shown).not.toMatch(/the-secret|PRIVATE KEY/);
  });

  it('seals both together for "{id}:credentials": they open for that webhook only, and not as its signing secret', () => {
    const box = fixedSecretBox();
    const credentials = { auth: { type: 'headers' as const, headers: { 'X-Api-Key': 'v' } }, clientCertificate: certificate };
    const sealed = sealCredentials(box, credentials, 'wh_1')!;
    expect(sealed.sealed.includes('X-Api-Key')).toBe(false);
    expect(openCredentials(box, sealed, 'wh_1')).toEqual(credentials);
    expect(() => openCredentials(box, sealed, 'wh_2')).toThrow();
    expect(() => box.open(sealed, 'wh_1')).toThrow();
    expect(sealCredentials(box, { auth: null, clientCertificate: null }, 'wh_1')).toBeNull();
    expect(openCredentials(box, null, 'wh_1')).toEqual({ auth: null, clientCertificate: null });
  });

  it('keeps what a change omits, and removes what it sets to null', () => {
    const current = { auth: { type: 'headers' as const, headers: { 'X-A': '1' } }, clientCertificate: certificate };
    expect(applyChange(current, {})).toEqual(current);
    expect(applyChange(current, { auth: null })).toEqual({ auth: null, clientCertificate: certificate });
    expect(applyChange(current, { clientCertificate: null })).toEqual({ auth: current.auth, clientCertificate: null });
  });
});

describe('tokenOf: a token endpoint answer', () => {
  it('takes a bearer token and its lifetime, or an hour without one', () => {
    expect(tokenOf('{"access_token":"abc.def","token_type":"Bearer","expires_in":120}')).toEqual({
      accessToken: 'abc.def',
      lifetimeMs: 120_000,
    });
    expect(tokenOf('{"access_token":"abc","token_type":"bearer","expires_in":"60"}')).toEqual({ accessToken: 'abc', lifetimeMs: 60_000 });
    expect(tokenOf('{"access_token":"abc"}')).toEqual({ accessToken: 'abc', lifetimeMs: TOKEN_DEFAULT_LIFETIME_MS });
  });

  it.each([
    ['not json', 'something other than JSON'],
    ['null', 'no usable access_token'],
    ['[]', 'no usable access_token'],
    ['{"access_token":""}', 'no usable access_token'],
    ['{"access_token":"a b"}', 'no usable access_token'],
    ['{"access_token":"a\\nb"}', 'no usable access_token'],
    ['{"access_token":42}', 'no usable access_token'],
    ['{"access_token":"a","token_type":"mac"}', 'not a bearer token'],
    ['{"access_token":"a","expires_in":0}', 'invalid expires_in'],
    ['{"access_token":"a","expires_in":-5}', 'invalid expires_in'],
    ['{"access_token":"a","expires_in":"soon"}', 'invalid expires_in'],
  ])('refuses %s', (text, message) => {
    expect(() => tokenOf(text)).toThrow(TokenError);
    expect(() => tokenOf(text)).toThrow(message);
  });
});
