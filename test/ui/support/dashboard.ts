// Driving the dashboard in a browser: tabs signed in as an account, waiting on what they show,
// the keyboard's focus, reactivation, and the delivery log's rows and width.
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { Receiver } from '../../support/receiver';
import { startSmtpServer, type SmtpServer } from '../../support/smtp';
import { startTestStack, type TestStack } from '../../support/stack';
import { launchChromium } from './browser';

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 375, height: 812 };

/**
 * Opens dashboard tabs, each in a context of its own, and collects what they print as
 * errors (a CSP violation is one) or throw; `closeAll` closes them.
 */
export function dashboardTabs(browser: Browser, dashboardUrl: () => string) {
  const contexts: BrowserContext[] = [];
  let problems: string[] = [];
  return {
    /** A new tab on the dashboard, signed in with `token` if given. */
    async open(token?: string, viewport = DESKTOP): Promise<Page> {
      const context = await browser.newContext({ viewport });
      contexts.push(context);
      const page = await context.newPage();
      problems = [];
      page.on('console', (message) => {
        // The API's 4xx answers the tests provoke are logged by the browser too; nothing else may be.
        if (message.type() === 'error' && !message.location().url.includes('/v3/')) problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(String(error)));
      await page.goto(dashboardUrl());
      if (token) await signIn(page, token);
      return page;
    },
    /** What the tabs opened since the last `open` printed as errors or threw. */
    get problems(): string[] {
      return problems;
    },
    async closeAll(): Promise<void> {
      await Promise.all(contexts.splice(0).map((context) => context.close()));
    },
  };
}

export async function signIn(page: Page, token: string): Promise<void> {
  await page.getByLabel('Account API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Your webhooks' }).waitFor();
}

/** Opens one of the header's pages, and waits for its heading. */
export async function openPage(page: Page, name: string): Promise<void> {
  await page.getByRole('button', { name, exact: true }).click();
  await page.getByRole('heading', { name }).waitFor();
}

/** Opens a webhook's page from the list. */
export async function openWebhook(page: Page, url: string): Promise<void> {
  await page.getByRole('button', { name: url }).click();
  await page.getByRole('heading', { name: url }).waitFor();
}

// What runs in the page is written as strings, or typed by hand as below: the tests are
// type-checked for Node, without the DOM's types.
export const IS_FOCUSED = (element: unknown) =>
  element === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement;

/** Presses Tab until `target` has the focus: it is reachable by keyboard. */
export async function tabTo(page: Page, target: Locator): Promise<void> {
  for (let presses = 0; presses < 60; presses++) {
    if (await target.evaluate(IS_FOCUSED)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${String(target)}`);
}

/** The question a paused webhook's Reactivate asks once its ping has answered, with its two buttons. */
export const reactivationQuestion = (page: Page) => page.getByRole('group', { name: /^The receiver/ });

/**
 * Reactivates the paused webhook whose page is open, as an owner does: Reactivate, the ping's
 * answer, then Reactivate again to confirm. Returns the answer as the page showed it.
 */
export async function reactivate(page: Page): Promise<string | undefined> {
  await page.getByRole('button', { name: 'Reactivate', exact: true }).click();
  const question = reactivationQuestion(page);
  await question.waitFor();
  const answer = await textOf(question.locator('#reactivate-answer'));
  await question.getByRole('button', { name: 'Reactivate', exact: true }).click();
  await expectText(page.locator('.facts .badge'), 'Active');
  return answer;
}

export const textOf = async (locator: Locator) => (await locator.textContent())?.trim();

/** The delivery log's entries, without the detail row an open entry has under it. */
export const logRows = (page: Page) => page.locator('table.deliveries tbody tr:not(.detail-row)');

/** How far the page is wider than its window (nothing to scroll sideways to: 0 or less). */
export const pageOverflow = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');

/** How far the delivery log's table is wider than its column (it fits: 0 or less). */
export const logTableOverflow = (page: Page) =>
  page.evaluate<number>(
    `(() => { const scroll = document.querySelector('section.log .table-scroll'); return scroll.scrollWidth - scroll.clientWidth; })()`,
  );

/** Opens the detail of the log's first entry with the keyboard, and returns its panel. */
export async function openFirstDetail(page: Page): Promise<Locator> {
  const details = logRows(page)
    .first()
    .getByRole('button', { name: /^Details of/ });
  await details.focus();
  await page.keyboard.press('Enter');
  expect(await details.getAttribute('aria-expanded')).toBe('true');
  const panel = page.locator('tr.detail-row .delivery-detail');
  await panel.waitFor();
  return panel;
}

/** Waits until the locator shows text matching `pattern`. */
export async function expectText(locator: Locator, pattern: RegExp | string): Promise<void> {
  await expect.poll(() => textOf(locator), { timeout: 10_000 }).toMatch(pattern);
}

interface DashboardSuite {
  stack: TestStack;
  receiver: Receiver;
  browser: Browser;
  tabs: ReturnType<typeof dashboardTabs>;
  /** With `{ mail: true }`: the SMTP server the stack mails notices through. */
  smtp: SmtpServer;
}

/**
 * A test file's stack (configured by `env`), receiver, browser and dashboard tabs, and with
 * `mail` a real SMTP server for its notices: started before its first test and stopped after
 * its last; after each test its tabs close and must have logged no problem.
 */
export function useDashboard(env: Record<string, string> = {}, { mail = false } = {}): DashboardSuite {
  const suite = {} as DashboardSuite;
  beforeAll(async () => {
    if (mail) suite.smtp = await startSmtpServer();
    suite.stack = await startTestStack(mail ? { SMTP_URL: suite.smtp.url, ...env } : env);
    suite.receiver = await suite.stack.startReceiver();
    suite.browser = await launchChromium();
    suite.tabs = dashboardTabs(suite.browser, () => `${suite.stack.service.url}/dashboard`);
  });
  afterEach(async () => {
    await suite.tabs.closeAll();
    expect(suite.tabs.problems).toEqual([]);
  });
  afterAll(async () => {
    await suite.browser?.close();
    await suite.stack?.stop();
    await suite.smtp?.stop();
  });
  return suite;
}
