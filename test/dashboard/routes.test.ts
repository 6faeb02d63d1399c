// The dashboard as the API process serves it: the page, its two assets, its settings, and
// the headers that keep it to its own script and style.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

const EXPECTED_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

function expectSecurityHeaders(response: Response): void {
  expect(Object.fromEntries(Object.keys(EXPECTED_HEADERS).map((name) => [name, response.headers.get(name)]))).toEqual(EXPECTED_HEADERS);
  const policy = Object.fromEntries(
    response.headers
      .get('content-security-policy')!
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .map(([name, ...values]) => [name, values.join(' ')]),
  );
  expect(policy).toMatchObject({
    'default-src': "'self'",
    'script-src': "'self'",
    'style-src': "'self'",
    'connect-src': "'self'",
    'frame-ancestors': "'none'",
  });
}

describe('GET /dashboard', () => {
  it.for([
    ['/dashboard', /^text\/html/],
    ['/dashboard/app.js', /^text\/javascript/],
    ['/dashboard/app.css', /^text\/css/],
    ['/dashboard/favicon.svg', /^image\/svg\+xml/],
  ] as const)('serves %s without a token, with the security headers', async ([path, type]) => {
    const response = await fetch(`${stack.service.url}${path}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(type);
    expectSecurityHeaders(response);
    expect(await response.text()).not.toHaveLength(0);
  });

  it('loads its script and style from files only: no inline script, style or handler', async () => {
    const html = await (await fetch(`${stack.service.url}/dashboard`)).text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map(([, attributes, body]) => [attributes.trim(), body.trim()])).toEqual([
      ['type="module" src="/dashboard/app.js"', ''],
    ]);
    expect(html).toMatch(/<link rel="stylesheet" href="\/dashboard\/app\.css"\s*\/?>/);
    expect(html).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
  });

  it('answers other paths under /dashboard as unknown routes, in the envelope', async () => {
    const response = await stack.request('GET', '/dashboard/../package.json');
    expect(response.status).toBe(404);
    const other = await stack.request('GET', '/dashboard/secret.txt');
    expect(other).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
    // With a trailing slash it is the page itself (its assets' paths are absolute).
    const slash = await fetch(`${stack.service.url}/dashboard/`);
    expect(slash.headers.get('content-type')).toMatch(/^text\/html/);
  });
});

describe('GET /dashboard/settings.json', () => {
  /** The settings the API at `baseUrl` serves, asked for without a token, as the page asks. */
  async function settingsOf(baseUrl: string): Promise<unknown> {
    const response = await fetch(`${baseUrl}/dashboard/settings.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json\b/);
    expectSecurityHeaders(response);
    return response.json();
  }

  it('says trace ids are not linked when TRACE_URL_TEMPLATE is unset', async () => {
    expect(await settingsOf(stack.service.url)).toEqual({ traceUrlTemplate: null });
  });

  it('answers the template the dashboard links trace ids with', async () => {
    const traceUrlTemplate = 'http://localhost:16686/trace/{traceId}';
    const api = await stack.startApiWith({ traceUrlTemplate });
    try {
      expect(await settingsOf(api.url)).toEqual({ traceUrlTemplate });
    } finally {
      await api.close();
    }
  });
});
