// A receiver's credentials in the dashboard, in headless Chromium against the real stack:
// static headers set at registration for a receiver that demands one, then replaced and
// removed; OAuth2 client credentials against a real token endpoint; a client certificate
// pasted, then read from files, for a receiver that requires mutual TLS. Each change is proven
// by a ping the receiver checks, and after each save the page holds no credential: not in its
// text, its markup or its fields. Saves the screenshot docs/dashboard-and-manual-tools.md shows.
import { X509Certificate } from 'node:crypto';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { issueClientCert, type Pem } from '../../scripts/lib/tls';
import type { ReceivedRequest, Receiver } from '../support/receiver';
import { SCREENSHOTS } from './support/browser';
import { PHONE, expectText, openWebhook, pageOverflow, useDashboard } from './support/dashboard';

const suite = useDashboard();

/** Everything the page holds: its markup, and what its fields hold (a field's value is no attribute). */
const pageHolds = (page: Page) =>
  page.evaluate<string>(
    `document.documentElement.outerHTML + '\\n' + [...document.querySelectorAll('input, textarea')].map((field) => field.value).join('\\n')`,
  );

async function expectNoCredential(page: Page, credentials: string[]): Promise<void> {
  const held = await pageHolds(page);
  for (const credential of credentials) expect(held).not.toContain(credential);
}

const fact = (page: Page, name: string) => page.locator('.facts dt', { hasText: name }).locator('xpath=following-sibling::dd[1]');

const webhookOf = async (token: string, webhookId: string) =>
  (await suite.stack.request('GET', `/v3/webhooks/${webhookId}`, { token })).body;

/** Sends a ping from the webhook's page and returns its answer as shown (the last one's is gone while it runs). */
async function ping(page: Page): Promise<string | null> {
  const answered = page.waitForResponse((response) => response.url().endsWith('/pings'));
  await page.getByRole('button', { name: 'Send a ping' }).click();
  await answered;
  const answer = page.locator('.action [role=status]', { hasText: /^Ping:/ });
  await answer.waitFor();
  return answer.textContent();
}

const lastTo = (receiver: Receiver, urlPath: string): ReceivedRequest | undefined =>
  receiver.requests.filter((request) => request.path === urlPath).at(-1);

let tokenEndpoint: Receiver;
let mutualTls: Receiver;
let firstCertificate: Pem;
let secondCertificate: Pem;

const CLIENT_ID = 'dashboard-client';
const basic = (secret: string) => `Basic ${Buffer.from(`${CLIENT_ID}:${secret}`).toString('base64')}`;
const CLIENT_SECRETS = ['first-client-secret-4f1d9a', 'second-client-secret-8b3e27'];
const ACCESS_TOKENS = ['access-token-for-first-6c02', 'access-token-for-second-91ad'];

beforeAll(async () => {
  // A token endpoint that gives each client secret its own token, and refuses any other.
  tokenEndpoint = await suite.stack.startReceiver();
  tokenEndpoint.respondWith((request) => {
    const known = CLIENT_SECRETS.findIndex((secret) => request.headers.authorization === basic(secret));
    if (known < 0) return { status: 401 };
    return {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: ACCESS_TOKENS[known], token_type: 'Bearer', expires_in: 3600 }),
    };
  });
  mutualTls = await suite.stack.startReceiver({ clientCa: suite.stack.ca.cert });
  firstCertificate = await issueClientCert(suite.stack.ca, 'dashboard-sender');
  secondCertificate = await issueClientCert(suite.stack.ca, 'dashboard-sender-two');
});

describe("a receiver's credentials in the dashboard", () => {
  it('sets static headers at registration for a receiver that demands one, replaces and removes them, and never shows a value', async () => {
    const urlPath = '/ui/credentials/headers';
    const url = suite.receiver.urlFor(urlPath);
    const [firstKey, tenant, secondKey] = ['first-api-key-77c1e0', 'tenant-value-5a9f', 'second-api-key-30be42'];
    let demanded = firstKey;
    suite.receiver.respondWith((request) => ({
      status: request.path !== urlPath || request.headers['x-api-key'] === demanded ? 200 : 401,
    }));
    try {
      const account = await suite.stack.createAccount();
      const page = await suite.tabs.open(account.token);
      await page.getByRole('button', { name: 'Register a webhook' }).click();
      await page.getByLabel('Endpoint URL').fill(url);
      await page.getByText('Receiver behind a gateway: credentials (optional)').click();
      await page.getByLabel('Static headers').check();
      await page.getByLabel('Header 1 name').fill('X-Api-Key');
      await page.getByLabel('Header 1 value').fill(firstKey);
      await page.getByRole('button', { name: 'Add a header' }).click();
      await page.getByLabel('Header 2 name').fill('X-Tenant');
      await page.getByLabel('Header 2 value').fill(tenant);
      await page.getByRole('button', { name: 'Register' }).click();
      await page.getByLabel('Secret', { exact: true }).waitFor();
      // The registration's ping carried both headers (the receiver answered 200 to the key alone).
      expect(lastTo(suite.receiver, urlPath)?.headers).toMatchObject({ 'x-api-key': firstKey, 'x-tenant': tenant });
      await expectNoCredential(page, [firstKey, tenant]);

      await page.getByRole('button', { name: 'I have stored the secret' }).click();
      await page.getByRole('heading', { name: url }).waitFor();
      await expectText(fact(page, 'Authentication'), 'Static headers: X-Api-Key, X-Tenant');
      await expectNoCredential(page, [firstKey, tenant]);

      // Replacing: the names are kept, the values typed again; a reserved name is refused beside the fields.
      await page.getByRole('button', { name: 'Replace authentication' }).click();
      expect(await page.getByLabel('Header 1 name').inputValue()).toBe('X-Api-Key');
      expect(await page.getByLabel('Header 1 value').inputValue()).toBe('');
      await page.getByLabel('Header 2 name').fill('SVC-Tenant');
      await page.getByLabel('Header 2 value').fill(tenant);
      await page.getByLabel('Header 1 value').fill(secondKey);
      await page.getByRole('button', { name: 'Save authentication' }).click();
      await expectText(page.locator('#edit-auth-error'), /auth\/headers\/SVC-Tenant: is a header the service sets itself/);
      await page.getByRole('button', { name: 'Remove header 2' }).click();
      await page.getByRole('button', { name: 'Save authentication' }).click();
      await expectText(page.locator('.credentials [role=status]'), 'Authentication saved.');
      await expectText(fact(page, 'Authentication'), 'Static headers: X-Api-Key');
      await expectNoCredential(page, [firstKey, tenant, secondKey]);
      demanded = secondKey;
      expect(await ping(page)).toMatch(/^Ping: Delivered: HTTP 200/);
      expect(lastTo(suite.receiver, urlPath)?.headers).not.toHaveProperty('x-tenant');

      await page.getByRole('button', { name: 'Remove authentication' }).click();
      await expectText(page.locator('.credentials [role=status]'), 'Authentication removed.');
      await expectText(fact(page, 'Authentication'), 'None: the signature only');
      expect(await ping(page)).toMatch(/^Ping: Failed: non_2xx \(HTTP 401\)/);
      expect(lastTo(suite.receiver, urlPath)?.headers).not.toHaveProperty('x-api-key');
      await expectNoCredential(page, [firstKey, tenant, secondKey]);
    } finally {
      suite.receiver.respondWith({});
    }
  });

  it('sets OAuth2 client credentials whose token goes as a bearer token, replaces the secret, removes them, and never shows the secret', async () => {
    const urlPath = '/ui/credentials/oauth2';
    const { owner, webhookId } = await suite.stack.setUpListWebhook(suite.receiver.urlFor(urlPath));
    const tokenUrl = tokenEndpoint.urlFor('/oauth/token');
    let demanded = ACCESS_TOKENS[0];
    suite.receiver.respondWith((request) => ({
      status: request.path !== urlPath || request.headers.authorization === `Bearer ${demanded}` ? 200 : 401,
    }));
    try {
      const page = await suite.tabs.open(owner.token);
      await openWebhook(page, suite.receiver.urlFor(urlPath));
      await expectText(fact(page, 'Authentication'), 'None: the signature only');
      await page.getByRole('button', { name: 'Set authentication' }).click();
      await page.getByLabel('OAuth2 client credentials').check();
      await page.getByLabel('Token URL').fill(tokenUrl);
      await page.getByLabel('Client id').fill(CLIENT_ID);
      await page.getByLabel('Client secret').fill(CLIENT_SECRETS[0]);
      await page.getByLabel('Scope (optional)').fill('hooks:receive');
      // What the check reads: a field's value, which no attribute holds, is among it while typed.
      expect(await pageHolds(page)).toContain(CLIENT_SECRETS[0]);
      await page.getByRole('button', { name: 'Save authentication' }).click();
      await expectText(page.locator('.credentials [role=status]'), 'Authentication saved.');
      await expectText(fact(page, 'Authentication'), `OAuth2 client credentials: client ${CLIENT_ID} at ${tokenUrl} (scope hooks:receive)`);
      expect((await webhookOf(owner.token, webhookId)).auth).toEqual({
        type: 'oauth2',
        tokenUrl,
        clientId: CLIENT_ID,
        scope: 'hooks:receive',
        audience: null,
      });
      expect(await ping(page)).toMatch(/^Ping: Delivered: HTTP 200/);
      await expectNoCredential(page, [...CLIENT_SECRETS, ...ACCESS_TOKENS]);

      // Replacing: the token URL, client id and scope are kept; the secret is typed again.
      await page.getByRole('button', { name: 'Replace authentication' }).click();
      expect(await page.getByLabel('Token URL').inputValue()).toBe(tokenUrl);
      expect(await page.getByLabel('Client secret').inputValue()).toBe('');
      await page.getByLabel('Client secret').fill(CLIENT_SECRETS[1]);
      // docs/dashboard-and-manual-tools.md shows the form as it replaces: names kept, the secret typed again, concealed.
      await page.locator('section.credentials').screenshot({ path: path.join(SCREENSHOTS, 'dashboard-credentials.png') });
      await page.getByRole('button', { name: 'Save authentication' }).click();
      await expectText(page.locator('.credentials [role=status]'), 'Authentication saved.');
      demanded = ACCESS_TOKENS[1];
      expect(await ping(page)).toMatch(/^Ping: Delivered: HTTP 200/);
      await expectNoCredential(page, [...CLIENT_SECRETS, ...ACCESS_TOKENS]);

      await page.getByRole('button', { name: 'Remove authentication' }).click();
      await expectText(fact(page, 'Authentication'), 'None: the signature only');
      expect((await webhookOf(owner.token, webhookId)).auth).toBeNull();
      expect(await ping(page)).toMatch(/^Ping: Failed: non_2xx \(HTTP 401\)/);
      expect(lastTo(suite.receiver, urlPath)?.headers).not.toHaveProperty('authorization');
      await expectNoCredential(page, [...CLIENT_SECRETS, ...ACCESS_TOKENS]);
    } finally {
      suite.receiver.respondWith({});
    }
  });

  it('registers with a pasted client certificate for a receiver that requires one, replaces it from files, removes it, and never shows the key', async () => {
    const urlPath = '/ui/credentials/mtls';
    const url = mutualTls.urlFor(urlPath);
    const keys = [firstCertificate.key, secondCertificate.key].map((pem) => pem.split('\n')[2]);
    const account = await suite.stack.createAccount();
    const page = await suite.tabs.open(account.token);
    await page.getByRole('button', { name: 'Register a webhook' }).click();
    await page.getByLabel('Endpoint URL').fill(url);
    await page.getByText('Receiver behind a gateway: credentials (optional)').click();
    await page.getByLabel('Certificate (PEM)').fill(firstCertificate.cert);
    await page.getByLabel('Private key (PEM, unencrypted)').fill(firstCertificate.key);
    await page.getByRole('button', { name: 'Register' }).click();
    await page.getByLabel('Secret', { exact: true }).waitFor();
    expect(lastTo(mutualTls, urlPath)?.clientCommonName).toBe('dashboard-sender');
    await expectNoCredential(page, keys);

    await page.getByRole('button', { name: 'I have stored the secret' }).click();
    await page.getByRole('heading', { name: url }).waitFor();
    const first = new X509Certificate(firstCertificate.cert);
    await expectText(
      fact(page, 'Client certificate'),
      new RegExp(`^CN=dashboard-sender, expires .* UTC\\s*SHA-256 ${first.fingerprint256}$`),
    );

    // Read from files; a key that is not the certificate's is refused beside the fields first.
    await page.getByRole('button', { name: 'Replace the certificate' }).click();
    const file = (name: string, pem: string) => ({ name, mimeType: 'application/x-pem-file', buffer: Buffer.from(pem) });
    await page.getByLabel('Read the certificate from a file').setInputFiles(file('sender.crt', secondCertificate.cert));
    await page.getByLabel('Read the private key from a file').setInputFiles(file('first.key', firstCertificate.key));
    await expect.poll(() => page.getByLabel('Certificate (PEM)').inputValue()).toBe(secondCertificate.cert);
    await page.getByRole('button', { name: 'Save the certificate' }).click();
    await expectText(page.locator('#edit-certificate-error'), /clientCertificate\/privateKey: is not the certificate's private key/);
    await page.getByLabel('Read the private key from a file').setInputFiles(file('sender.key', secondCertificate.key));
    await expect.poll(() => page.getByLabel('Private key (PEM, unencrypted)').inputValue()).toBe(secondCertificate.key);
    await page.getByRole('button', { name: 'Save the certificate' }).click();
    await expectText(page.locator('.credentials [role=status]'), 'Client certificate saved.');
    await expectText(fact(page, 'Client certificate'), /^CN=dashboard-sender-two, expires/);
    await expectNoCredential(page, keys);
    expect(await ping(page)).toMatch(/^Ping: Delivered: HTTP 200/);
    expect(lastTo(mutualTls, urlPath)?.clientCommonName).toBe('dashboard-sender-two');

    const delivered = mutualTls.requests.length;
    await page.getByRole('button', { name: 'Remove the certificate' }).click();
    await expectText(page.locator('.credentials [role=status]'), 'Client certificate removed.');
    await expectText(fact(page, 'Client certificate'), 'None');
    // Without a certificate the receiver refuses the handshake: the ping gets no answer.
    expect(await ping(page)).toMatch(/^Ping: Failed: (tls|connection)/);
    expect(mutualTls.requests).toHaveLength(delivered);
    await expectNoCredential(page, keys);
  });

  it('fits a 375 px wide screen with both forms open', async () => {
    const { owner } = await suite.stack.setUpListWebhook(suite.receiver.urlFor('/ui/credentials/narrow'));
    const page = await suite.tabs.open(owner.token, PHONE);
    await openWebhook(page, suite.receiver.urlFor('/ui/credentials/narrow'));
    await page.getByRole('button', { name: 'Set authentication' }).click();
    await page.getByRole('button', { name: 'Add a header' }).click();
    await page.getByRole('button', { name: 'Set a client certificate' }).click();
    await page.getByLabel('Certificate (PEM)').fill(firstCertificate.cert);
    expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
  });
});
