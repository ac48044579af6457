import { afterAll, describe, expect, it } from 'vitest';
import { testInfra, waitUntil } from './support/infra.js';
import { NO_DROPS, startPipeline, type Pipeline } from './support/pipeline.js';

const NORMAL = Array.from({ length: 24 }, (_, i) => `10.${i % 4}.${i}.7`);
const ATTACKERS = ['192.0.2.66', '198.18.7.66', '203.0.113.66'];
const BAN_THRESHOLD = 100;

/**
 * The aggregator killed with SIGKILL while edges publish, then started again:
 * no event the edges had acknowledged goes uncounted, and no attacker gets two bans.
 */
describe('fault: aggregator killed with kill -9 mid-stream', () => {
  const { kafkaBrokers } = testInfra();
  let pipeline: Pipeline | undefined;

  afterAll(async () => {
    await pipeline?.close();
  });

  it('counts every accepted event and bans each attacker once across the kill', async () => {
    pipeline = await startPipeline(kafkaBrokers, 6);
    const p = pipeline;
    await p.policy({ id: 'login-per-ip', key: ['ip'], match: { pathPrefixes: ['/login'] }, threshold: { count: BAN_THRESHOLD, interval: '1h' }, action: { type: 'ban', banDuration: '10m' } });
    await p.watch();
    let aggregator = await p.startAggregator();
    const edge = p.edge('edge-kill');
    // Normal users browse (no ban policy applies); attackers hammer /login and cross its ban threshold.
    const traffic = edge.steady(NORMAL, 12, 20);
    const attack = edge.steady(ATTACKERS, 3, 20, '/login');

    await waitUntil(() => (p.counted() ?? 0) > 500, 'counting to be under way', 30_000, 100);
    await waitUntil(() => ATTACKERS.some((ip) => p.bans().latest().has(`ip:${ip}`)), 'a first ban before the kill', 30_000, 100);
    aggregator.proc.child.kill('SIGKILL');
    expect(await aggregator.proc.exited).toBe('SIGKILL');
    const countedAtKill = p.counted() ?? 0;
    // Edges go on while no aggregator runs.
    await waitUntil(() => edge.accepted() > countedAtKill + 1_000, 'edges to go on publishing', 30_000, 50);
    aggregator = await p.startAggregator();
    // And while the new one rebuilds and catches up.
    await waitUntil(() => (p.counted() ?? 0) > edge.accepted() - 2_000 && (p.counted() ?? 0) > countedAtKill, 'the new aggregator to count', 60_000, 100);
    traffic.stop();
    attack.stop();

    const stats = await edge.settle(15_000);
    expect(stats.dropped).toEqual(NO_DROPS);
    expect(stats.delivered).toBe(stats.published);
    await p.waitCounted(() => edge.accepted(), 60_000);
    expect(p.counted()).toBe(edge.accepted());

    // Each attacker has exactly one ban, the very same record however often it was seen; nobody else.
    await waitUntil(() => ATTACKERS.every((ip) => p.bans().latest().has(`ip:${ip}`)), 'every attacker banned', 30_000, 100);
    const bans = p.bans().records;
    expect([...new Set(bans.map((r) => r.key))].sort()).toEqual(ATTACKERS.map((ip) => `ip:${ip}`).sort());
    for (const ip of ATTACKERS) {
      const records = bans.filter((r) => r.key === `ip:${ip}`);
      expect(
        records.every((r) => r.value !== null),
        `no tombstone for ${ip}`,
      ).toBe(true);
      expect(new Set(records.map((r) => r.value?.banId)).size, `ban ids of ${ip}`).toBe(1);
      expect(new Set(records.map((r) => JSON.stringify(r.value))).size, `distinct ban records of ${ip}`).toBe(1);
    }
    expect(await aggregator.metric('banstream_aggregator_events_consumed_total')).toBeGreaterThan(0);
  }, 180_000);
});
