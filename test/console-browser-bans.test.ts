import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra, waitUntil } from './support/infra.js';
import { produceOrFail } from './support/kafka.js';
import { encodeBan, manualBan } from './support/bans.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { startControl, testTokens, type Control } from './support/control.js';
import { startSidecar, type Sidecar } from './support/pipeline.js';
import { launchBrowser, screenshot, watchedPage } from './support/browser.js';
import { byTestId, closeBrowser, consoleEnv, expectAccessible, openPage, signIn, stopProcess } from './support/console.js';

/** A reason that runs script if the page ever renders data as HTML: a dialog, and a flag in the page. */
const HOSTILE_REASON = `<script>window.__xss = 'script'; alert('xss script')</script><img src="x" onerror="window.__xss = 'img'; alert('xss img')">`;

const HOSTILE_PATH = `/search?q=<svg onload="window.__xss = 'svg'; alert('xss svg')">`;

/** The enforcer's answer follows the console's ban and lift within this, from the API's acknowledgment seen by the page. */
const PROPAGATION_MS = 1_000;

/** The Bans page in Debian's chromium: an operator's ban and lift reach a real enforcer; data renders as text. */
describe('web console: bans', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  const tokens = testTokens();
  let broker: TestBroker;
  let control: Control;
  let enforcer: Sidecar;
  let browser: Browser;

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers);
    // Bans the aggregator would have placed, so the page is not empty around the console's own.
    const seeded = [
      manualBan('ip:203.0.113.9', { policyId: 'login-flood', origin: 'aggregator', createdBy: null, reason: 'over 20 failed logins in 1m', evidenceCount: 64, windowSeconds: 60 }),
      manualBan('cidr:198.18.7.0/24', { policyId: 'scraper', origin: 'aggregator', createdBy: null, reason: 'over 500 requests in 1m from the network', evidenceCount: 812, windowSeconds: 60 }),
      manualBan('user:mallory', { policyId: 'credential-stuffing', origin: 'aggregator', createdBy: null, reason: 'logins from 40 networks in 10m', evidenceCount: 40, windowSeconds: 600 }),
    ];
    await produceOrFail(
      broker.producer,
      broker.topics.name('bans'),
      seeded.map((b) => ({ key: b.subject, value: encodeBan(b) })),
    );
    [control, enforcer, browser] = await Promise.all([startControl({ ...broker.env, ...consoleEnv(tokens.entries) }), startSidecar({ ...broker.env, REDIS_URL: redisUrl }), launchBrowser()]);
  }, 120_000);

  afterAll(async () => {
    await closeBrowser(browser);
    await control?.stop();
    await stopProcess(enforcer?.proc);
    await broker?.close();
  });

  const allowed = async (ip: string) => (await enforcer.check({ ip })).body.allowed === true;
  const row = (page: Page, subject: string) => page.locator(`${byTestId('ban-row')}[data-subject="${subject}"]`);

  it('bans an address from the Bans page as an operator: an enforcer denies it within a second; lifted, it is allowed within a second', async () => {
    const { page, problems } = await watchedPage(browser);
    await signIn(page, control.url, tokens.operator);
    await openPage(page, 'bans');
    expect(await allowed('198.51.100.23')).toBe(true);

    await page.locator(byTestId('ban-subject')).fill('198.51.100.23');
    await page.locator(byTestId('ban-duration')).fill('10m');
    await page.locator(byTestId('ban-reason')).fill('credential stuffing seen in the console');
    const [added] = await Promise.all([page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/bans' && r.request().method() === 'POST'), page.locator(byTestId('ban-submit')).click()]);
    expect(added.status()).toBe(201);
    const banAcked = performance.now();
    const denied = await waitUntil(
      async () => {
        const d = await enforcer.check({ ip: '198.51.100.23' });
        return d.body.allowed === false ? d.body : undefined;
      },
      `the enforcer to deny 198.51.100.23 within ${PROPAGATION_MS} ms of the console's ban`,
      PROPAGATION_MS,
      10,
    );
    const banMs = performance.now() - banAcked;
    expect(denied).toMatchObject({ status: 403, source: 'ban', policyId: 'manual' });
    expect(await allowed('198.51.100.24')).toBe(true);

    await row(page, 'ip:198.51.100.23').waitFor();
    await expectAccessible(page, 'the bans page as an operator');
    await screenshot(page, 'console-bans');

    const [lifted] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname.startsWith('/v1/bans/') && r.request().method() === 'DELETE'),
      row(page, 'ip:198.51.100.23').locator(byTestId('ban-lift')).click(),
    ]);
    expect(lifted.status()).toBe(200);
    const liftAcked = performance.now();
    await waitUntil(() => allowed('198.51.100.23'), `the enforcer to allow 198.51.100.23 within ${PROPAGATION_MS} ms of the console's lift`, PROPAGATION_MS, 10);
    const liftMs = performance.now() - liftAcked;
    await row(page, 'ip:198.51.100.23').waitFor({ state: 'detached' });
    console.log(JSON.stringify({ test: 'console-ban-propagation', ban_to_enforcer_ms: Math.round(banMs), lift_to_enforcer_ms: Math.round(liftMs) }));

    // The audit names the token behind the session.
    const audit = await waitUntil(async () => {
      const found = await control.call('GET', `/v1/audit?target=${encodeURIComponent('ip:198.51.100.23')}`, { token: tokens.admin });
      return found.body?.records?.length === 2 ? (found.body.records as { action: string; actor: string }[]) : undefined;
    }, 'the ban and the lift in the audit trail');
    expect(audit.map((r) => [r.action, r.actor])).toEqual([
      ['ban.add', 'operator-user'],
      ['ban.lift', 'operator-user'],
    ]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('opened by its address, asks for its rows with the session check, not after it, and once; an early answer refused before sign-in is not shown after it', async () => {
    const { page, problems } = await watchedPage(browser);
    const rowRequests: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/v1/bans' && r.method() === 'GET') rowRequests.push(r.url());
    });
    // No session yet: the early request is refused, the sign-in form shows, and after it the page asks again.
    await page.goto(`${control.url}/console/#/bans`);
    await page.locator(byTestId('signin-token')).fill(tokens.viewer);
    await page.locator(byTestId('signin-submit')).click();
    await row(page, 'ip:203.0.113.9').waitFor();
    expect(rowRequests).toHaveLength(2);

    rowRequests.length = 0;
    await page.goto('about:blank');
    // In the order the browser reports them: the rows are asked for before the session's answer
    // is in (the code before asked only after the page had rendered with that answer). Resource
    // timings cannot tell: the browser may hold the second request a few ms for a connection.
    const order: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/v1/bans') order.push('rows asked');
    });
    page.on('response', (r) => {
      if (new URL(r.url()).pathname === '/console/session') order.push('session answered');
    });
    await page.goto(`${control.url}/console/#/bans`);
    await row(page, 'cidr:198.18.7.0/24').waitFor();
    expect(order).toEqual(['rows asked', 'session answered']);
    expect(rowRequests).toHaveLength(1);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("shows the API's guard-rail refusal of a too-wide network in the ban form, and bans nothing", async () => {
    const { page, problems } = await watchedPage(browser);
    await signIn(page, control.url, tokens.operator);
    await openPage(page, 'bans');
    await page.locator(byTestId('ban-subject')).fill('10.0.0.0/4');
    await page.locator(byTestId('ban-duration')).fill('10m');
    await page.locator(byTestId('ban-reason')).fill('far too wide');
    await page.locator(byTestId('ban-submit')).click();
    await page.locator(byTestId('ban-form-error')).waitFor();
    expect(await page.locator(byTestId('ban-form-error')).textContent()).toMatch(/\/4|prefix|wide|force/i);
    expect((await control.call('GET', '/v1/bans?scope=cidr', { token: tokens.admin })).body.bans.map((b: { subject: string }) => b.subject)).toEqual(['cidr:198.18.7.0/24']);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("renders a ban reason and an attacker's evidence (user agent, path) holding a script tag and an img onerror as text: visible, nothing run", async () => {
    const placed = await control.call('POST', '/v1/bans', { token: tokens.operator, body: { subject: '192.0.2.66', duration: '1h', reason: HOSTILE_REASON } });
    expect(placed.status).toBe(201);
    // What an attacker chooses outright: the user agent and the path of its requests, kept as an aggregator ban's evidence.
    const now = Date.now();
    const evidence = {
      firstEventAt: now - 5_000,
      lastEventAt: now,
      sampledEvents: 40,
      paths: [{ value: HOSTILE_PATH, count: 40 }],
      methods: [{ value: 'GET', count: 40 }],
      statuses: [{ value: '200', count: 40 }],
      userAgents: [{ value: HOSTILE_REASON, count: 40 }],
      edges: [{ value: 'edge-1', count: 40 }],
    };
    const sampled = manualBan('ip:192.0.2.67', { policyId: 'flood', origin: 'aggregator', createdBy: null, reason: 'over the threshold of flood', evidenceCount: 40, windowSeconds: 10, evidence });
    await produceOrFail(broker.producer, broker.topics.name('bans'), [{ key: sampled.subject, value: encodeBan(sampled) }]);

    const { page, problems } = await watchedPage(browser);
    await signIn(page, control.url, tokens.operator);
    await openPage(page, 'bans');
    await page.locator(byTestId('bans-filter-subject')).fill('192.0.2.6');
    const hostile = row(page, 'ip:192.0.2.66');
    await hostile.waitFor();
    expect(await hostile.locator(byTestId('ban-reason-text')).textContent()).toBe(HOSTILE_REASON);
    const withEvidence = row(page, 'ip:192.0.2.67');
    await withEvidence.waitFor();
    await withEvidence.locator(byTestId('ban-details')).click();
    const detail = page.locator(byTestId('ban-detail'));
    await waitUntil(async () => (await detail.textContent())?.includes(HOSTILE_PATH), 'the evidence in the ban detail', 10_000);
    expect(await detail.textContent()).toContain(HOSTILE_REASON);
    // Had any of it been parsed as HTML there would be an element, a flag, a dialog or a CSP refusal.
    expect(await page.locator('img[src="x"], script:not([src]), svg[onload]').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __xss?: string }).__xss)).toBeUndefined();
    await expectAccessible(page, 'the bans page with a ban detail open');
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
