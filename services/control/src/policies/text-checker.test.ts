import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { TextChecker as TextCheckerType } from './text-checker.js';

// The compiled checker, so that its worker file exists beside it (`npm test` builds first).
const compiled = fileURLToPath(new URL('../../dist/policies/text-checker.js', import.meta.url));

async function checker(options: { deadlineMs: number; maxWaiting: number }): Promise<TextCheckerType> {
  if (!existsSync(compiled)) throw new Error(`${compiled} is missing: run npm run build first`);
  const { TextChecker } = (await import(compiled)) as typeof import('./text-checker.js');
  return new TextChecker(options);
}

const policy = (id: string, count = 10) => `- id: ${id}\n  key: [ip]\n  threshold: { count: ${count}, interval: 1m }\n  action: { type: throttle }\n`;
/** A valid file of n policies: seconds of YAML parsing for a few thousand. */
const many = (n: number) => Array.from({ length: n }, (_, i) => policy(`p${i}`)).join('');

describe('TextChecker: policy texts checked off the event loop, bounded in time and queue', () => {
  let open: TextCheckerType | undefined;
  afterEach(async () => {
    await open?.close();
    open = undefined;
  });

  it('answers a valid text with its policies and an invalid one with the field path', async () => {
    open = await checker({ deadlineMs: 30_000, maxWaiting: 4 });
    expect(await open.check(policy('ok'))).toMatchObject({ ok: true, policies: [{ id: 'ok' }] });
    const bad = await open.check(policy('bad', 0));
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.errors.map((e) => e.path)).toContain('[0].threshold.count');
  });

  it('keeps the event loop turning while a large text is parsed', async () => {
    open = await checker({ deadlineMs: 60_000, maxWaiting: 4 });
    await open.check(policy('warm'));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const started = performance.now();
    const result = await open.check(many(3_000));
    const tookMs = performance.now() - started;
    clearInterval(timer);
    expect(result.ok).toBe(true);
    // Parsed in-line, the loop would not turn at all until the parse ended.
    expect(ticks).toBeGreaterThanOrEqual(Math.min(5, Math.floor(tookMs / 20)));
  }, 90_000);

  it('ends a text past its deadline with POLICY_CHECK_TIMEOUT, and checks the next one in a new worker', async () => {
    open = await checker({ deadlineMs: 50, maxWaiting: 4 });
    await expect(open.check(many(5_000))).rejects.toMatchObject({ code: 'POLICY_CHECK_TIMEOUT' });
    const next = await checker({ deadlineMs: 30_000, maxWaiting: 4 });
    try {
      expect(await next.check(policy('after'))).toMatchObject({ ok: true });
    } finally {
      await next.close();
    }
    // The same checker goes on too, with a fresh worker.
    await expect(open.check(policy('small'))).resolves.toMatchObject({ ok: true });
  }, 60_000);

  it('refuses texts past its queue with POLICY_CHECK_BUSY', async () => {
    open = await checker({ deadlineMs: 30_000, maxWaiting: 1 });
    const first = open.check(many(500));
    const second = open.check(policy('waits'));
    await expect(open.check(policy('refused'))).rejects.toMatchObject({ code: 'POLICY_CHECK_BUSY' });
    await expect(first).resolves.toMatchObject({ ok: true });
    await expect(second).resolves.toMatchObject({ ok: true });
  }, 60_000);
});
