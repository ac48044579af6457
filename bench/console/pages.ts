/**
 * What the console benchmark measures in the browser (Debian's chromium through
 * playwright-core, test/support/browser.ts): the JavaScript the console loads, the time
 * to a usable Bans page, and the Overview's update delay.
 */
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import type { PageGlobals } from '../../test/support/browser.js';
import { median, note } from '../lib.js';

const PAGES = ['overview', 'bans', 'policies', 'allowlist', 'alerts', 'audit'] as const;
const testId = (id: string) => `[data-testid="${id}"]`;

export async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}/console/`);
  await page.locator(testId('signin-token')).fill(token);
  await page.locator(testId('signin-submit')).click();
  await page.locator(testId('whoami')).waitFor({ timeout: 60_000 });
}

export interface ScriptFigures {
  console_js_files: number;
  console_js_bytes: number;
  /** Every script any page loads, each gzip-compressed at level 9 (as a server or CDN would), summed. */
  console_js_gzip_kb: number;
}

/**
 * Every JavaScript response the console's pages load (lazy chunks included: each page
 * is visited), read again from the server, compressed with gzip -9.
 */
export async function measureScripts(page: Page, url: string): Promise<ScriptFigures> {
  const scripts = new Set<string>();
  const seen = (response: { url(): string; headers(): Record<string, string>; request(): { resourceType(): string } }) => {
    const type = response.headers()['content-type'] ?? '';
    if (response.request().resourceType() === 'script' || type.includes('javascript')) scripts.add(response.url());
  };
  page.on('response', seen);
  await page.goto(`${url}/console/`);
  await page.locator(testId('whoami')).waitFor();
  for (const name of PAGES) {
    await page.locator(testId(`nav-${name}`)).click();
    await page.locator(testId(`page-${name}`)).waitFor();
  }
  await page.waitForLoadState('networkidle');
  page.off('response', seen);
  if (scripts.size === 0) throw new Error('the console loaded no script');
  let bytes = 0;
  let gzipped = 0;
  for (const script of scripts) {
    const body = Buffer.from(await (await fetch(script)).arrayBuffer());
    bytes += body.length;
    gzipped += gzipSync(body, { level: 9 }).length;
  }
  note(`scripts: ${[...scripts].map((s) => new URL(s).pathname).join(', ')}: ${bytes} bytes, ${gzipped} gzip`);
  return { console_js_files: scripts.size, console_js_bytes: bytes, console_js_gzip_kb: Math.round((gzipped / 1024) * 10) / 10 };
}

export interface UsableFigures {
  /** Median over the loads after the first: navigation start to a usable Bans page. */
  bans_usable_ms: number;
  /** The first load (scripts not cached yet). */
  bans_usable_first_ms: number;
  bans_usable_max_ms: number;
  /** Ceiling: a bare GET of the same first page of bans, with a token, from this process. */
  ceiling_bans_get_ms: number;
  bans_usable_ratio_to_ceiling: number;
  /** Bytes of that JSON page. */
  bans_page_json_bytes: number;
}

/**
 * "Usable": the first page of rows rendered and the subject search enabled. Timed in the
 * page, from the navigation's start (performance.timeOrigin) to the first animation frame
 * that finds both, over `runs` fresh loads of /console/#/bans. The ceiling replays the
 * exact request the page made for its rows (GET /v1/bans?…) with fetch and a token.
 */
export async function measureUsableBans(page: Page, url: string, token: string, runs: number): Promise<UsableFigures> {
  let rowsRequest: string | undefined;
  page.on('request', (request) => {
    const u = new URL(request.url());
    if (u.pathname === '/v1/bans' && request.method() === 'GET') rowsRequest ??= request.url();
  });
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    await page.goto('about:blank');
    await page.goto(`${url}/console/#/bans`, { waitUntil: 'commit' });
    const handle = await page.waitForFunction(
      () => {
        const { document } = globalThis as unknown as PageGlobals;
        const rows = document.querySelectorAll('[data-testid="ban-row"]').length;
        const search = document.querySelector('[data-testid="bans-filter-subject"]');
        return rows > 0 && search !== null && !search.disabled ? performance.now() : false;
      },
      undefined,
      { polling: 'raf', timeout: 60_000 },
    );
    times.push((await handle.jsonValue()) as number);
    note(`bans page usable in ${Math.round(times.at(-1)!)} ms`);
  }
  if (rowsRequest === undefined) throw new Error('the Bans page made no GET /v1/bans request');
  const gets: number[] = [];
  let jsonBytes = 0;
  for (let run = 0; run < runs; run++) {
    const t = performance.now();
    const res = await fetch(rowsRequest, { headers: { authorization: `Bearer ${token}` } });
    const body = await res.arrayBuffer();
    gets.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`GET ${rowsRequest}: ${res.status}`);
    jsonBytes = body.byteLength;
  }
  note(`bare GET ${new URL(rowsRequest).pathname}${new URL(rowsRequest).search}: ${gets.map((g) => Math.round(g)).join(', ')} ms`);
  const warm = times.length > 1 ? times.slice(1) : times;
  const usable = median(warm);
  const ceiling = median(gets);
  return {
    bans_usable_ms: Math.round(usable),
    bans_usable_first_ms: Math.round(times[0]!),
    bans_usable_max_ms: Math.round(Math.max(...times)),
    ceiling_bans_get_ms: Math.round(ceiling * 10) / 10,
    bans_usable_ratio_to_ceiling: Math.round((usable / ceiling) * 100) / 100,
    bans_page_json_bytes: jsonBytes,
  };
}

export interface OverviewFigures {
  overview_delay_p50_ms: number;
  overview_delay_max_ms: number;
  overview_delay_samples: number;
}

/**
 * The Overview's update delay after an event: `emit` publishes one ban (what the
 * aggregator does when a subject crosses a threshold); the delay runs from just before
 * that send to the Overview's bans-per-minute figure changing in the page (a
 * MutationObserver stamps the change with the same wall clock). Events are spaced by a
 * tick and a varying offset, so they land at every phase of the server's push period.
 */
export async function measureOverviewDelay(page: Page, url: string, emit: (n: number) => Promise<void>, samples: number, tickMs: number): Promise<OverviewFigures> {
  await page.goto(`${url}/console/#/overview`);
  const figure = page.locator(testId('overview-bans-per-minute'));
  await page.waitForFunction(() => (globalThis as unknown as PageGlobals).document.querySelector('[data-testid="overview-updated-at"]')?.getAttribute('data-updated-at'), undefined, {
    timeout: 30_000,
  });
  await page.evaluate(() => {
    const { document, MutationObserver } = globalThis as unknown as PageGlobals;
    const changes: { at: number; value: string | null }[] = [];
    (globalThis as { __changes?: typeof changes }).__changes = changes;
    const element = document.querySelector('[data-testid="overview-bans-per-minute"]');
    if (element === null) throw new Error('no overview-bans-per-minute');
    let last = element.getAttribute('data-value');
    new MutationObserver(() => {
      const value = document.querySelector('[data-testid="overview-bans-per-minute"]')?.getAttribute('data-value') ?? null;
      if (value !== last) changes.push({ at: Date.now(), value });
      last = value;
    }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  });
  await figure.waitFor();
  const delays: number[] = [];
  for (let n = 0; n < samples; n++) {
    const before = (await page.evaluate(() => (globalThis as { __changes?: unknown[] }).__changes?.length ?? 0)) as number;
    const sent = Date.now();
    await emit(n);
    const handle = await page.waitForFunction((count) => ((globalThis as { __changes?: { at: number }[] }).__changes ?? [])[count]?.at ?? false, before, { timeout: 30_000, polling: 50 });
    delays.push(((await handle.jsonValue()) as number) - sent);
    note(`overview updated ${delays.at(-1)} ms after a ban`);
    await new Promise((resolve) => setTimeout(resolve, tickMs + ((n * 397) % tickMs)));
  }
  return { overview_delay_p50_ms: Math.round(median(delays)), overview_delay_max_ms: Math.max(...delays), overview_delay_samples: delays.length };
}
