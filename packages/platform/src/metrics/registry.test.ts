import { describe, expect, it } from 'vitest';
import { counter, createMetricsRegistry, EVENT_LOOP_REFRESH_MS, tallyCounter } from './registry.js';

async function values(registry: ReturnType<typeof createMetricsRegistry>, name: string) {
  const metric = registry.getSingleMetric(name)!;
  return (await metric.get()).values.map((v) => [v.labels, v.value]);
}

describe('tallyCounter', () => {
  it('gives prom-client the sums per label values when the counter is read, once', async () => {
    const registry = createMetricsRegistry('test', { defaultMetrics: false });
    const decisions = tallyCounter(registry, { name: 'decisions_total', help: 'h', labelNames: ['source', 'result'] });
    for (let i = 0; i < 5; i++) decisions.inc('ban', 'deny');
    decisions.inc('none', 'allow');
    expect(await values(registry, 'decisions_total')).toEqual([
      [{ source: 'ban', result: 'deny' }, 5],
      [{ source: 'none', result: 'allow' }, 1],
    ]);
    // A second read adds nothing; later increments add to the sums.
    expect(await values(registry, 'decisions_total')).toEqual([
      [{ source: 'ban', result: 'deny' }, 5],
      [{ source: 'none', result: 'allow' }, 1],
    ]);
    decisions.inc('ban', 'deny');
    expect(await registry.metrics()).toContain('decisions_total{source="ban",result="deny",service="test"} 6');
  });

  it('shares one tally between two declarations of the same counter, with one label', async () => {
    const registry = createMetricsRegistry('test', { defaultMetrics: false });
    tallyCounter(registry, { name: 'by_policy_total', help: 'h', labelNames: ['policy'] }).inc('a');
    tallyCounter(registry, { name: 'by_policy_total', help: 'h', labelNames: ['policy'] }).inc('a');
    expect(await values(registry, 'by_policy_total')).toEqual([[{ policy: 'a' }, 2]]);
  });

  it('refuses a name already taken by a plain counter, and more than two labels', () => {
    const registry = createMetricsRegistry('test', { defaultMetrics: false });
    counter(registry, { name: 'plain_total', help: 'h', labelNames: ['x'] });
    expect(() => tallyCounter(registry, { name: 'plain_total', help: 'h', labelNames: ['x'] })).toThrow(/plain counter/);
    expect(() => tallyCounter(registry, { name: 'three_total', help: 'h', labelNames: ['a', 'b', 'c'] })).toThrow(/one or two labels/);
  });
});

describe('the event-loop statistics', () => {
  const max = async (registry: ReturnType<typeof createMetricsRegistry>) => (await registry.getSingleMetric('banstream_nodejs_eventloop_lag_max_seconds')!.get()).values[0]?.value;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('are refreshed at most every EVENT_LOOP_REFRESH_MS: a scrape in between reports the last ones, the next refresh covers the time since', async () => {
    let now = 0;
    const registry = createMetricsRegistry('test', { clock: () => now });
    // At once: the monitor has recorded nothing yet.
    await registry.metrics();
    expect(await max(registry)).toBe(0);
    await sleep(60);
    now = EVENT_LOOP_REFRESH_MS - 1;
    await registry.metrics();
    expect(await max(registry)).toBe(0);
    now = EVENT_LOOP_REFRESH_MS;
    await registry.metrics();
    expect(await max(registry)).toBeGreaterThan(0);
  });

  it('all eight are still exported', async () => {
    const text = await createMetricsRegistry('test').metrics();
    for (const stat of ['', '_min', '_max', '_mean', '_stddev', '_p50', '_p90', '_p99']) expect(text).toMatch(new RegExp(`^banstream_nodejs_eventloop_lag${stat}_seconds\\{service="test"\\} `, 'm'));
  });
});
