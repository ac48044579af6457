import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';
import { describeViolations, seriousViolations } from './browser.js';
import { exitWithin, type RunningProcess } from './processes.js';

/**
 * The web console as a user meets it, through the selectors the console promises
 * (data-testid attributes; docs/services/control.md, "Web console").
 */
export const PAGES = ['overview', 'bans', 'policies', 'allowlist', 'alerts', 'audit'] as const;
export type ConsolePage = (typeof PAGES)[number];

/** The session cookie's name. */
export const SESSION_COOKIE = 'banstream-session';

/** What the console needs of the control service in a test: tokens, and no rate limit in the way of a page's calls. */
export function consoleEnv(tokenEntries: string): Record<string, string> {
  return { CONTROL_TOKENS: tokenEntries, CONTROL_RATE_LIMIT: '100000' };
}

export const byTestId = (id: string) => `[data-testid="${id}"]`;

/** Opens the console, signs in with `token` through the sign-in form, and waits for the frame. */
export async function signIn(page: Page, controlUrl: string, token: string): Promise<void> {
  await page.goto(`${controlUrl}/console/`);
  await page.locator(byTestId('signin-token')).fill(token);
  await page.locator(byTestId('signin-submit')).click();
  await page.locator(byTestId('whoami')).waitFor();
}

/** Follows the navigation link to a page and waits for its container. */
export async function openPage(page: Page, name: ConsolePage): Promise<void> {
  await page.locator(byTestId(`nav-${name}`)).click();
  await page.locator(byTestId(`page-${name}`)).waitFor();
}

/** Fails with the violations' list if axe-core finds a serious or critical one in the page as it is. */
export async function expectAccessible(page: Page, where: string): Promise<void> {
  const violations = await seriousViolations(page);
  expect(violations, `${where}: axe-core found serious or critical violations:\n${describeViolations(violations)}`).toEqual([]);
}

/** The session cookie the browser holds for the console, as a Cookie header. */
export async function sessionCookie(page: Page): Promise<string> {
  const cookie = (await page.context().cookies()).find((c) => c.name === SESSION_COOKIE);
  if (cookie === undefined) throw new Error(`the browser holds no ${SESSION_COOKIE} cookie`);
  return `${cookie.name}=${cookie.value}`;
}

/**
 * A write sent from the page's own script with its session (cookie) and, when `csrf` is
 * true, the CSRF token the session answer gives: what a page script, or a tampered one, can do.
 */
export async function writeFromPage(page: Page, method: string, path: string, body: unknown, csrf: boolean): Promise<{ status: number; code?: string }> {
  return page.evaluate(
    async ({ method, path, body, csrf }) => {
      const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
      if (csrf) {
        const session = (await (await fetch('/console/session', { credentials: 'same-origin' })).json()) as { csrf: string };
        headers['x-csrf-token'] = session.csrf;
      }
      const res = await fetch(path, { method, headers, credentials: 'same-origin', ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const text = await res.text();
      let code: string | undefined;
      try {
        code = (JSON.parse(text) as { code?: string }).code;
      } catch {
        code = undefined;
      }
      return { status: res.status, ...(code === undefined ? {} : { code }) };
    },
    { method, path, body, csrf },
  );
}

/** Stops a service process a test started: SIGTERM, then SIGKILL past 15 s. */
export async function stopProcess(proc: RunningProcess | undefined): Promise<void> {
  if (proc === undefined) return;
  proc.child.kill('SIGTERM');
  await exitWithin(proc, 15_000).catch(() => proc.child.kill('SIGKILL'));
}

/** Closes the browser, never failing the test's clean-up over it. */
export async function closeBrowser(browser: Browser | undefined): Promise<void> {
  await browser?.close().catch(() => undefined);
}
