import type { Browser, Page } from 'playwright-core';
import type { RequestEvent } from '@banstream/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra, waitUntil } from './support/infra.js';
import { freePort } from './support/processes.js';
import { event, publishEvents, publishPolicy, startAggregator, type Aggregator } from './support/aggregator.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { startControl, testTokens, type Control } from './support/control.js';
import { startSidecar, type Sidecar } from './support/pipeline.js';
import { launchBrowser, screenshot, watchedPage } from './support/browser.js';
import { byTestId, closeBrowser, consoleEnv, expectAccessible, openPage, PAGES, signIn, stopProcess } from './support/console.js';

const FLOOD_IP = '203.0.113.50';

/**
 * The live Overview in Debian's chromium against the real pipeline (aggregator, an
 * enforcer whose metrics control reads), and an accessibility pass over every page as
 * an admin, who is shown every control.
 */
describe('web console: live overview, and every page accessible', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  const tokens = testTokens();
  let broker: TestBroker;
  let aggregator: Aggregator;
  let enforcer: Sidecar;
  let control: Control;
  let browser: Browser;
  let traffic: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers);
    await publishPolicy(broker.producer, broker.topics.name('policies'), { id: 'overview-flood', key: ['ip'], threshold: { count: 40, interval: '10s' }, action: { type: 'ban', banDuration: '10m' } });
    // Ports chosen first, so control (which reads their metrics) starts beside them rather than after.
    const [aggregatorPort, enforcerPort] = [await freePort(), await freePort()];
    [aggregator, enforcer, control, browser] = await Promise.all([
      startAggregator({ ...broker.env, AGGREGATOR_TICK_MS: '50', AGGREGATOR_GROUP_ID: `${broker.topics.prefix}aggregator`, HTTP_PORT: String(aggregatorPort) }),
      startSidecar({ ...broker.env, REDIS_URL: redisUrl, HTTP_PORT: String(enforcerPort) }),
      startControl({
        ...broker.env,
        ...consoleEnv(tokens.entries),
        CONTROL_CONSOLE_METRICS_URLS: `http://127.0.0.1:${enforcerPort},http://127.0.0.1:${aggregatorPort}`,
        CONTROL_CONSOLE_TICK_MS: '500',
      }),
      launchBrowser(),
    ]);
  }, 120_000);

  afterAll(async () => {
    clearInterval(traffic);
    await closeBrowser(browser);
    await control?.stop();
    await stopProcess(enforcer?.proc);
    if (aggregator) await stopProcess(aggregator.proc);
    await broker?.close();
  });

  /** 100 events/s from 200 quiet clients (5 in 10 s each, well under the threshold), and from `floodAfter` on 100/s from one address. */
  function startTraffic(floodAfter: number): void {
    const started = Date.now();
    let busy = false;
    let tick = 0;
    traffic = setInterval(() => {
      if (busy) return;
      busy = true;
      const now = Date.now();
      const events: RequestEvent[] = [];
      for (let i = 0; i < 10; i++) {
        const h = (tick * 10 + i) % 200;
        events.push(event(`192.0.2.${h + 1}`, now, { country: h % 3 === 0 ? 'DE' : h % 3 === 1 ? 'FR' : 'JP' }));
      }
      tick++;
      if (now - started > floodAfter) {
        for (let i = 0; i < 10; i++) events.push(event(FLOOD_IP, now, { country: 'NL' }));
        // The flood also asks the enforcer, which denies it once banned: denials by source.
        for (let i = 0; i < 5; i++) void enforcer.check({ ip: FLOOD_IP }).catch(() => undefined);
      }
      void publishEvents(broker.producer, broker.topics.name('events'), events).finally(() => (busy = false));
    }, 100);
  }

  const figure = async (page: Page, id: string) => Number(await page.locator(byTestId(id)).getAttribute('data-value'));
  const updatedAt = async (page: Page) => Number(await page.locator(byTestId('overview-updated-at')).getAttribute('data-updated-at'));

  it('updates the Overview live: events per second, then the ban of a flood and its denials at the enforcer', async () => {
    const { page, problems } = await watchedPage(browser);
    await signIn(page, control.url, tokens.admin);
    await openPage(page, 'overview');
    const first = await waitUntil(async () => (await updatedAt(page)) || undefined, 'a first overview snapshot');
    await waitUntil(async () => (await updatedAt(page)) > first, 'a later snapshot, pushed without a reload');

    startTraffic(3_000);
    await waitUntil(async () => (await figure(page, 'overview-events-per-second')) > 0, 'events per second above 0', 20_000);
    await waitUntil(() => aggregator.metric('banstream_aggregator_bans_emitted_total').then((n) => n > 0), 'the flood to be banned', 30_000, 200);
    await waitUntil(async () => (await figure(page, 'overview-bans-per-minute')) >= 1, 'the ban in bans per minute', 10_000);
    // The enforcer counts its denials by source; control reads them from its metrics.
    await waitUntil(async () => (await enforcer.check({ ip: FLOOD_IP })).body.allowed === false, 'the enforcer to deny the flood', 10_000, 20);
    await waitUntil(async () => /ban/i.test((await page.locator(byTestId('overview-denials')).textContent()) ?? ''), 'denials by source to show the ban', 10_000);
    // Only the flood is banned: the quiet clients stay under the threshold.
    expect(await figure(page, 'overview-bans-per-minute')).toBe(1);

    await expectAccessible(page, 'the overview page');
    // Two more snapshots under the traffic, so the picture shows the rates, not the first readings.
    const shown = await updatedAt(page);
    await waitUntil(async () => (await updatedAt(page)) > shown + 1_000, 'two more snapshots');
    await screenshot(page, 'console-overview');
    clearInterval(traffic);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 180_000);

  it('has no serious or critical accessibility violation on any page as an admin', async () => {
    const added = await control.call('POST', '/v1/allowlist', { token: tokens.operator, body: { entry: '192.0.2.200', reason: 'monitoring', ttl: '1h' } });
    expect(added.status).toBe(201);
    const { page, problems } = await watchedPage(browser);
    await signIn(page, control.url, tokens.admin);
    for (const name of PAGES) {
      await openPage(page, name);
      if (name === 'bans') await page.locator(`${byTestId('ban-row')}[data-subject="ip:${FLOOD_IP}"]`).waitFor();
      if (name === 'allowlist') await page.locator(`${byTestId('allow-row')}[data-entry="${added.body.entry}"]`).waitFor();
      if (name === 'audit') await page.locator(byTestId('audit-row')).first().waitFor();
      await expectAccessible(page, `the ${name} page as an admin`);
    }
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
