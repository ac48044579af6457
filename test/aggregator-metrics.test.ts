import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { exitWithin } from './support/processes.js';
import { event, publishEvents, publishPolicy, startAggregator, type Aggregator } from './support/aggregator.js';

/**
 * The aggregator's /metrics under an attacker's traffic: no series is labelled with a
 * subject, so addresses and user ids cannot grow Prometheus; who is hottest is logged.
 */
describe('aggregator metrics carry no subject', () => {
  const { kafkaBrokers } = testInfra();
  let broker: TestBroker;
  let aggregator: Aggregator;

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    const { producer, topics } = broker;
    await publishPolicy(producer, topics.name('policies'), { id: 'per-ip', key: ['ip'], threshold: { count: 100, interval: '1m' }, action: { type: 'ban', banDuration: '1m' } });
    await publishPolicy(producer, topics.name('policies'), { id: 'per-user', key: ['user'], threshold: { count: 100, interval: '1m' }, action: { type: 'ban', banDuration: '1m' } });
    aggregator = await startAggregator({ ...broker.env, AGGREGATOR_TICK_MS: '20', AGGREGATOR_GROUP_ID: `${topics.prefix}aggregator`, LOG_LEVEL: 'info' });
  }, 90_000);

  afterAll(async () => {
    aggregator?.proc.child.kill('SIGTERM');
    if (aggregator) await exitWithin(aggregator.proc, 15_000);
    await broker?.close();
  });

  it('shows the hottest count per policy, never the subject; the subjects are in the log', async () => {
    const now = Date.now();
    // Hot (at least half the threshold) but not banned: 60 and 70 requests of 100.
    const events = [
      ...Array.from({ length: 60 }, (_, i) => event('203.0.113.77', now - 60 + i, { userId: 'mallory@example.com' })),
      ...Array.from({ length: 70 }, (_, i) => event('198.51.100.23', now - 70 + i)),
    ];
    await publishEvents(broker.producer, broker.topics.name('events'), events);
    const scrape = await waitUntil(async () => {
      const text = await (await fetch(`http://127.0.0.1:${aggregator.port}/metrics`)).text();
      // The two addresses' events land on different partitions, counted in no set order: wait for both.
      return /^banstream_aggregator_policy_hottest_count\{policy="per-ip",service="aggregator"\} 70$/m.test(text) && text.includes('banstream_aggregator_policy_hottest_count{policy="per-user"')
        ? text
        : undefined;
    }, 'the hottest counts of both policies (per-ip at 70)');
    expect(scrape).toMatch(/^banstream_aggregator_policy_hottest_count\{policy="per-ip",service="aggregator"\} 70$/m);
    expect(scrape).toMatch(/^banstream_aggregator_policy_hottest_count\{policy="per-user",service="aggregator"\} 60$/m);
    for (const secret of ['203.0.113.77', '198.51.100.23', 'mallory', 'subject=']) expect(scrape).not.toContain(secret);

    const logged = await waitUntil(
      () =>
        aggregator.proc
          .output()
          .split('\n')
          .find((l) => l.includes('"msg":"hot subjects nearest their threshold"')),
      'the hot subjects log line',
    );
    // Logged at the first sweep that finds hot subjects (then at most once a minute): the per-IP
    // counts are made first, so the hottest address is in it, with its count so far.
    const top = (JSON.parse(logged) as { top: { policy: string; subject: string; count: number; threshold: number }[] }).top;
    const hottest = top.find((e) => e.subject === 'ip:198.51.100.23');
    expect(hottest).toMatchObject({ policy: 'per-ip', threshold: 100 });
    expect(hottest!.count).toBeGreaterThanOrEqual(50);
    expect(hottest!.count).toBeLessThanOrEqual(70);
    const ours = ['ip:198.51.100.23', 'ip:203.0.113.77', 'user:mallory@example.com'];
    expect(top.filter((e) => !ours.includes(e.subject))).toEqual([]);
  });
});
