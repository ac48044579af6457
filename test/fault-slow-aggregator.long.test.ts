import { afterAll, describe, expect, it } from 'vitest';
import { testInfra, waitUntil } from './support/infra.js';
import { consumerLag, NO_DROPS, startPipeline, type Pipeline } from './support/pipeline.js';
import { workerPids } from './support/aggregator.js';

const CLIENTS = Array.from({ length: 30 }, (_, i) => `10.${i % 5}.${i}.9`);
const STOPPED_MS = 15_000;

/**
 * A stalled aggregator (SIGSTOP for 15 s: longer than its 6 s session timeout, so
 * the group also evicts it), then SIGCONT: the lag the broker reports for its group
 * grows while it is stopped and drains by itself, and the counts stay exact.
 */
describe('fault: a slow aggregator', () => {
  const { kafkaBrokers } = testInfra();
  let pipeline: Pipeline | undefined;

  afterAll(async () => {
    await pipeline?.close();
  });

  it('lets the lag grow while it is stopped, drains it to 0 by itself, and counts every accepted event', async () => {
    pipeline = await startPipeline(kafkaBrokers, 3);
    const p = pipeline;
    const { admin, topics } = p.broker;
    const lag = () => consumerLag(admin, p.groupId, topics.name('events'));
    await p.watch();
    // At info, the supervisor logs its workers' pids ("worker started").
    const aggregator = await p.startAggregator({ LOG_LEVEL: 'info' });
    const edge = p.edge('edge-slow');
    const traffic = edge.steady(CLIENTS, 10, 20);
    await waitUntil(() => (p.counted() ?? 0) > 500, 'counting to be under way', 30_000, 100);
    const before = await lag();

    // The whole service: the supervisor and the worker that counts (its latest pid).
    const stopped = [aggregator.proc.child.pid!, workerPids(aggregator).at(-1)!];
    for (const pid of stopped) process.kill(pid, 'SIGSTOP');
    const stoppedAt = Date.now();
    const samples: number[] = [];
    while (Date.now() - stoppedAt < STOPPED_MS) {
      samples.push(await lag());
      await new Promise((r) => setTimeout(r, 1_000));
    }
    const countedWhileStopped = p.counted();
    const peak = await lag();
    for (const pid of stopped) process.kill(pid, 'SIGCONT');
    // It grew the whole time it was stopped.
    expect(peak).toBeGreaterThan(before + 100);
    expect(samples.at(-1)!).toBeGreaterThan(samples[0]!);

    // Drains while edges go on publishing: back near zero, well under the peak.
    const drained = await waitUntil(
      async () => {
        const l = await lag();
        return l < peak / 10 ? l : undefined;
      },
      'the lag to drain under traffic',
      60_000,
      250,
    );
    expect(drained).toBeLessThan(peak / 10);
    expect(p.counted()!).toBeGreaterThan(countedWhileStopped ?? 0);
    traffic.stop();
    const stats = await edge.settle(15_000);
    expect(stats.dropped).toEqual(NO_DROPS);
    await waitUntil(async () => (await lag()) === 0, 'the lag to reach 0', 30_000, 250);
    await p.waitCounted(() => edge.accepted(), 60_000);
    expect(p.counted()).toBe(edge.accepted());
    expect(await aggregator.metric('banstream_aggregator_events_consumed_total')).toBeGreaterThan(0);
  }, 150_000);
});
