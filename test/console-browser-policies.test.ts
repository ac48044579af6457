import type { Browser, Page } from 'playwright-core';
import type { RequestEvent } from '@banstream/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra, waitUntil } from './support/infra.js';
import { event, publishEvents, publishPolicy } from './support/aggregator.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { startControl, testTokens, type Control } from './support/control.js';
import { launchBrowser, screenshot, watchedPage, type PageGlobals } from './support/browser.js';
import { byTestId, closeBrowser, consoleEnv, expectAccessible, openPage, signIn } from './support/console.js';

const INVALID = `id: console-burst
description: Bursts from one address.
key: [ip]
threshold: { count: 0, interval: 10s }
action: { type: ban, banDuration: 5m }
`;
const VALID = INVALID.replace('count: 0', 'count: 30');

/** The stored policy the backtest's candidate is compared with: the candidate lowers its threshold from 100 to 20. */
const STORED = { id: 'console-flood', key: ['ip'], threshold: { count: 100, interval: '1m' }, action: { type: 'ban', banDuration: '10m' } };
const CANDIDATE = `id: console-flood
key: [ip]
threshold: { count: 20, interval: 1m }
action: { type: ban, banDuration: 10m }
`;

/** The Policies page in Debian's chromium: inline validation naming the field, the plan, apply, a backtest with progress and report. */
describe('web console: policies and backtests', () => {
  const { kafkaBrokers } = testInfra();
  const tokens = testTokens();
  let broker: TestBroker;
  let control: Control;
  let browser: Browser;

  /** The last minutes' traffic: two floods over 20 requests a minute (one over 100), a few quiet clients, from three countries. */
  function traffic(start: number): RequestEvent[] {
    const events: RequestEvent[] = [];
    let t = start;
    const add = (ip: string, n: number, country: string) => {
      for (let i = 0; i < n; i++) events.push(event(ip, (t += 10), { country }));
    };
    add('203.0.113.9', 150, 'FR');
    add('198.51.100.23', 40, 'DE');
    for (let h = 1; h <= 20; h++) add(`192.0.2.${h}`, 5, 'US');
    return events;
  }

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers);
    await publishPolicy(broker.producer, broker.topics.name('policies'), STORED);
    await publishEvents(broker.producer, broker.topics.name('events'), traffic(Date.now() - 60_000), 50);
    [control, browser] = await Promise.all([startControl({ ...broker.env, ...consoleEnv(tokens.entries) }), launchBrowser()]);
  }, 120_000);

  afterAll(async () => {
    await closeBrowser(browser);
    await control?.stop();
    await broker?.close();
  });

  const editor = (page: Page) => page.locator(byTestId('policy-editor'));

  it('shows the path of an invalid field inline; a valid policy shows its plan; an admin applies it', async () => {
    const { page, problems } = await watchedPage(browser);
    await signIn(page, control.url, tokens.admin);
    await openPage(page, 'policies');
    await page.locator(byTestId('policy-new')).click();
    await editor(page).fill(INVALID);
    const error = page.locator(`${byTestId('policy-error')}[data-path="threshold.count"]`);
    await error.waitFor();
    expect(await error.textContent()).toContain('threshold.count');
    expect(await page.locator(byTestId('policy-plan')).isVisible()).toBe(false);
    expect(await page.locator(byTestId('policy-apply')).isDisabled()).toBe(true);
    await expectAccessible(page, 'the policies page with a validation error');

    await editor(page).fill(VALID);
    await page.locator(`${byTestId('policy-plan-entry')}[data-action="create"]`).waitFor();
    expect(await page.locator(byTestId('policy-error')).count()).toBe(0);
    expect(await page.locator(byTestId('policy-plan')).textContent()).toContain('console-burst');
    await expectAccessible(page, 'the policies page with a plan');

    const apply = page.locator(byTestId('policy-apply'));
    expect(await apply.isEnabled()).toBe(true);
    await apply.click();
    await page.locator(`${byTestId('policy-row')}[data-policy-id="console-burst"]`).waitFor();
    const stored = await control.call('GET', '/v1/policies/console-burst', { token: tokens.viewer });
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ version: 1, updatedBy: 'admin-user', spec: { threshold: { count: 30, interval: '10s' } } });

    // A change to a stored policy is planned field by field.
    await page
      .locator(`${byTestId('policy-row')}[data-policy-id="console-flood"]`)
      .locator(byTestId('policy-edit'))
      .click();
    await editor(page).fill(CANDIDATE);
    const update = page.locator(`${byTestId('policy-plan-entry')}[data-action="update"]`);
    await update.waitFor();
    expect(await update.textContent()).toMatch(/threshold\.count[\s\S]*100[\s\S]*20/);
    await screenshot(page, 'console-policies');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('runs a backtest of the edited policy: its progress shows, then its report, compared with the stored version', async () => {
    const { page, problems } = await watchedPage(browser);
    await signIn(page, control.url, tokens.operator);
    await openPage(page, 'policies');
    await page
      .locator(`${byTestId('policy-row')}[data-policy-id="console-flood"]`)
      .locator(byTestId('policy-edit'))
      .click();
    await editor(page).fill(CANDIDATE);
    await page.locator(byTestId('policy-plan')).waitFor();
    expect(await page.locator(byTestId('policy-apply')).count(), 'apply is for admins').toBe(0);

    // Every state of the progress bar the page shows, however briefly, from before the click on.
    await page.evaluate(() => {
      const { document, MutationObserver } = globalThis as unknown as PageGlobals;
      const seen: { value: string | null; max: string | null; report: boolean }[] = [];
      (globalThis as { __progress?: typeof seen }).__progress = seen;
      const look = () => {
        const bar = document.querySelector('[data-testid="backtest-progress"]');
        const report = document.querySelector('[data-testid="backtest-report"]') !== null;
        if (bar !== null) seen.push({ value: bar.getAttribute('value'), max: bar.getAttribute('max'), report });
      };
      new MutationObserver(look).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    await page.locator(byTestId('backtest-start')).click();
    const report = page.locator(byTestId('backtest-report'));
    await report.waitFor({ timeout: 30_000 });
    const progress = await page.evaluate(() => (globalThis as { __progress?: { value: string | null; max: string | null; report: boolean }[] }).__progress ?? []);
    expect(progress.filter((p) => !p.report).length, `the progress bar shown before the report (seen: ${JSON.stringify(progress)})`).toBeGreaterThan(0);

    const subjects = await page.locator(byTestId('backtest-subjects')).textContent();
    expect(subjects).toContain('203.0.113.9');
    expect(subjects).toContain('198.51.100.23');
    expect(subjects).not.toContain('192.0.2.1');
    for (const part of ['backtest-bans-chart', 'backtest-refused-share', 'backtest-top-countries', 'backtest-top-prefixes', 'backtest-diff']) {
      expect(await page.locator(byTestId(part)).count(), part).toBe(1);
    }
    expect(await page.locator(byTestId('backtest-top-countries')).textContent()).toMatch(/FR[\s\S]*DE/);
    // The stored version (over 100 a minute) bans the first flood only: the candidate adds the second.
    expect(await page.locator(byTestId('backtest-diff')).textContent()).toContain('198.51.100.23');
    expect(await page.locator(byTestId('backtest-error')).count()).toBe(0);
    await report.scrollIntoViewIfNeeded();
    await expectAccessible(page, 'the policies page with a backtest report');
    await screenshot(page, 'console-backtest');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('answers the backtest it ran in the API too, with the same subjects', async () => {
    const jobs = await waitUntil(async () => {
      const list = await control.call('GET', '/v1/backtests', { token: tokens.viewer });
      return list.body?.backtests?.length > 0 ? list.body.backtests : undefined;
    }, 'the console-started backtest in the job list');
    expect(jobs[0]).toMatchObject({ state: 'done', policyId: 'console-flood', createdBy: 'operator-user' });
  });
});
