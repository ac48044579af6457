import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra } from './support/infra.js';
import { produceOrFail } from './support/kafka.js';
import { encodeBan, manualBan } from './support/bans.js';
import { publishPolicy } from './support/aggregator.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { startControl, testTokens, type Control } from './support/control.js';
import { launchBrowser, watchedPage } from './support/browser.js';
import { byTestId, closeBrowser, consoleEnv, expectAccessible, openPage, PAGES, sessionCookie, signIn, writeFromPage } from './support/console.js';

/** Every control that changes something; a viewer must be shown none of them. */
const WRITE_CONTROLS = ['ban-form', 'ban-submit', 'ban-lift', 'ban-extend', 'policy-apply', 'backtest-start', 'allow-form', 'allow-submit', 'allow-remove'];

/** The console in Debian's chromium: sign-in, what a viewer is shown and may do, sign-out. */
describe('web console: sessions and roles', () => {
  const { kafkaBrokers } = testInfra();
  const tokens = testTokens();
  let broker: TestBroker;
  let control: Control;
  let browser: Browser;
  /** The allowlist entry as control spells it. */
  let allowed = '';

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers);
    // Something on each page a viewer could act on if the console let them: a ban, a policy, an allowlist entry.
    await produceOrFail(broker.producer, broker.topics.name('bans'), [{ key: 'ip:198.51.100.40', value: encodeBan(manualBan('ip:198.51.100.40', { reason: 'seeded' })) }]);
    await publishPolicy(broker.producer, broker.topics.name('policies'), { id: 'seeded-flood', key: ['ip'], threshold: { count: 50, interval: '10s' }, action: { type: 'ban', banDuration: '5m' } });
    [control, browser] = await Promise.all([startControl({ ...broker.env, ...consoleEnv(tokens.entries) }), launchBrowser()]);
    const entry = await control.call('POST', '/v1/allowlist', { token: tokens.operator, body: { entry: '192.0.2.10', reason: 'our probe', ttl: '1h' } });
    expect(entry.status).toBe(201);
    allowed = entry.body.entry;
  }, 120_000);

  afterAll(async () => {
    await closeBrowser(browser);
    await control?.stop();
    await broker?.close();
  });

  it('refuses a wrong token on the sign-in page and sets no cookie; the sign-in page has no serious accessibility violation', async () => {
    const { page, problems } = await watchedPage(browser);
    await page.goto(`${control.url}/console/`);
    await page.locator(byTestId('signin-form')).waitFor();
    await expectAccessible(page, 'sign-in page');
    await page.locator(byTestId('signin-token')).fill(`${tokens.viewer}x`);
    await page.locator(byTestId('signin-submit')).click();
    await page.locator(byTestId('signin-error')).waitFor();
    expect(await page.locator(byTestId('whoami')).count()).toBe(0);
    expect(await page.context().cookies()).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows a viewer every page without a write control, and refuses a write forced from the page with 403', async () => {
    const { page, problems } = await watchedPage(browser);
    await signIn(page, control.url, tokens.viewer);
    expect(await page.locator(byTestId('whoami')).getAttribute('data-role')).toBe('viewer');
    for (const name of PAGES) {
      await openPage(page, name);
      if (name === 'bans') await page.locator(`${byTestId('ban-row')}[data-subject="ip:198.51.100.40"]`).waitFor();
      if (name === 'policies') {
        // The editor is for reading and validating; applying it is not for a viewer.
        const row = page.locator(`${byTestId('policy-row')}[data-policy-id="seeded-flood"]`);
        await row.locator(byTestId('policy-edit')).click();
        await page.locator(byTestId('policy-plan')).waitFor();
      }
      if (name === 'allowlist') await page.locator(`${byTestId('allow-row')}[data-entry="${allowed}"]`).waitFor();
      for (const control of WRITE_CONTROLS) expect(await page.locator(byTestId(control)).count(), `${control} on the ${name} page`).toBe(0);
      await expectAccessible(page, `the ${name} page as a viewer`);
    }

    const ban = { subject: '198.51.100.9', duration: '10m', reason: 'forced from the page' };
    // With the page's own CSRF token the role refuses it; without one, the CSRF check does.
    expect(await writeFromPage(page, 'POST', '/v1/bans', ban, true)).toEqual({ status: 403, code: 'FORBIDDEN' });
    expect(await writeFromPage(page, 'POST', '/v1/bans', ban, false)).toEqual({ status: 403, code: 'CSRF_INVALID' });
    expect(await writeFromPage(page, 'DELETE', `/v1/bans/${encodeURIComponent('ip:198.51.100.40')}`, undefined, true)).toMatchObject({ status: 403 });
    expect(await writeFromPage(page, 'PUT', '/v1/policies/seeded-flood', { key: ['ip'], threshold: { count: 1, interval: '1s' }, action: { type: 'ban', banDuration: '1h' } }, true)).toMatchObject({
      status: 403,
    });
    expect((await control.call('GET', `/v1/bans/${encodeURIComponent('ip:198.51.100.9')}`, { token: tokens.admin })).status).toBe(404);
    expect((await control.call('GET', `/v1/bans/${encodeURIComponent('ip:198.51.100.40')}`, { token: tokens.admin })).status).toBe(200);
    expect((await control.call('GET', '/v1/policies/seeded-flood', { token: tokens.admin })).body).toMatchObject({ version: 1 });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('ends the session on sign-out: the cookie it held is refused afterwards', async () => {
    const { page, problems } = await watchedPage(browser);
    await signIn(page, control.url, tokens.operator);
    const cookie = await sessionCookie(page);
    const asCookie = (path: string) => fetch(`${control.url}${path}`, { headers: { cookie } });
    expect((await asCookie('/v1/bans')).status).toBe(200);
    expect((await asCookie('/console/session')).status).toBe(200);

    await page.locator(byTestId('signout')).click();
    await page.locator(byTestId('signin-form')).waitFor();
    expect((await asCookie('/v1/bans')).status).toBe(401);
    expect((await asCookie('/console/session')).status).toBe(401);
    expect((await page.context().cookies()).some((c) => c.name === 'banstream-session' && `${c.name}=${c.value}` === cookie)).toBe(false);
    // A reload stays signed out.
    await page.reload();
    await page.locator(byTestId('signin-form')).waitFor();
    expect(await page.locator(byTestId('whoami')).count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
