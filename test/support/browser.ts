import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureDebianPackage } from '../../scripts/stack/index.mjs';
import { REPO_ROOT } from './processes.js';

/**
 * Debian's chromium, headless, driven by playwright-core (which downloads no browser).
 * `.ci/run` installs the package as it does the other system packages.
 * BANSTREAM_CHROMIUM points at another binary.
 */
export const CHROMIUM = process.env.BANSTREAM_CHROMIUM ?? '/usr/bin/chromium';

// Root has no user namespace sandbox to give chromium; the rest keeps it from reaching
// for a network this machine does not have (component updates, sync).
const ARGS = ['--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Launches the browser; Debian's chromium is installed first when missing and we are root (as .ci/run does). */
export async function launchBrowser(): Promise<Browser> {
  if (process.env.BANSTREAM_CHROMIUM === undefined) ensureDebianPackage('chromium', 'chromium', (line: string) => process.stderr.write(`[chromium] ${line}\n`));
  const asRoot = process.getuid?.() === 0;
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: asRoot ? ['--no-sandbox', ...ARGS] : ARGS, timeout: 60_000 });
}

/**
 * A page that fails its test on what a console page must never do: open a dialog
 * (alert() from an injected script), throw an uncaught error, or break the CSP. Each is
 * recorded in `problems` (read it in an afterEach or at the end of a test).
 */
export async function watchedPage(browser: Browser, options: { viewport?: { width: number; height: number } } = {}): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 800 }, colorScheme: 'light' });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('dialog', (dialog) => {
    problems.push(`dialog ${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // Chromium reports a CSP refusal on the console: something tried an inline script or eval.
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
  });
  return { page, problems };
}

const require = createRequire(import.meta.url);
let axeSource: string | undefined;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/**
 * axe-core run in the page, from node_modules (no network): the violations whose impact
 * is serious or critical. Injected through the DevTools protocol (page.evaluate), which
 * the console's CSP (script-src 'self') does not apply to, as a script tag would.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  const present = await page.evaluate(() => typeof (globalThis as { axe?: unknown }).axe === 'object');
  if (!present) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    const { document } = globalThis as unknown as PageGlobals;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** A readable line per violation, for an assertion's message. */
export function describeViolations(violations: readonly AxeViolation[]): string {
  return violations.map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`).join('\n');
}

/** docs/images, where the README's screenshots live. */
export const SCREENSHOT_DIR = join(REPO_ROOT, 'docs', 'images');

/**
 * Saves docs/images/NAME.png when BANSTREAM_SCREENSHOTS=1 (so `npm test` leaves the tree
 * clean); the README shows these.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.BANSTREAM_SCREENSHOTS !== '1') return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: false, animations: 'disabled' });
}

/**
 * The few names of the page's own globals that functions passed to page.evaluate use,
 * typed here because the tests compile without the DOM library (it clashes with Node's
 * fetch types). Inside such a function: `const { document } = globalThis as unknown as PageGlobals;`
 * (a type assertion only: nothing is captured from this module).
 */
export interface PageElement {
  getAttribute(name: string): string | null;
  readonly disabled?: boolean;
}
export interface PageGlobals {
  document: {
    readonly body: unknown;
    querySelector(selector: string): PageElement | null;
    querySelectorAll(selector: string): { readonly length: number };
  };
  MutationObserver: new (callback: () => void) => { observe(target: unknown, options: Record<string, boolean>): void };
}
