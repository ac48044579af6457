import { describe, expect, it } from 'vitest';
import { AggregatorRegistry } from 'prom-client';
import { Registry } from '@banstream/platform';
import { aggregatorMetrics, recordHottest, showPendingPublications } from './metrics.js';

const series = async (registry: Registry, name: string) => (await registry.getSingleMetric(name)!.get()).values.map((v) => [v.labels, v.value]);

describe('banstream_aggregator_policy_hottest_count', () => {
  it("is the count of each policy's hottest subject, one series per policy, none left from the last call", async () => {
    const registry = new Registry();
    const metrics = aggregatorMetrics(registry);
    recordHottest(metrics, [
      { policyId: 'login', count: 7 },
      { policyId: 'login', count: 31 },
      { policyId: 'api', count: 3 },
      { policyId: 'login', count: 12 },
    ]);
    expect(await series(registry, 'banstream_aggregator_policy_hottest_count')).toEqual([
      [{ policy: 'login' }, 31],
      [{ policy: 'api' }, 3],
    ]);
    recordHottest(metrics, [{ policyId: 'api', count: 4 }]);
    expect(await series(registry, 'banstream_aggregator_policy_hottest_count')).toEqual([[{ policy: 'api' }, 4]]);
  });

  it('merges workers by the highest count, not the sum (each subject is counted by one worker)', async () => {
    const workers = [new Registry(), new Registry()];
    recordHottest(aggregatorMetrics(workers[0]!), [{ policyId: 'login', count: 5 }]);
    recordHottest(aggregatorMetrics(workers[1]!), [
      { policyId: 'login', count: 9 },
      { policyId: 'api', count: 2 },
    ]);
    const merged = AggregatorRegistry.aggregate(await Promise.all(workers.map((r) => r.getMetricsAsJSON())));
    const text = await merged.metrics();
    expect(text).toContain('banstream_aggregator_policy_hottest_count{policy="login"} 9');
    expect(text).toContain('banstream_aggregator_policy_hottest_count{policy="api"} 2');
  });
});

describe('banstream_aggregator_publication_pending_seconds', () => {
  it('is read when scraped from the latest service built on the registry, and merged across workers by the longest', async () => {
    const registry = new Registry();
    showPendingPublications(aggregatorMetrics(registry), () => 1_000);
    showPendingPublications(aggregatorMetrics(registry), () => 2_500);
    expect(await series(registry, 'banstream_aggregator_publication_pending_seconds')).toEqual([[{}, 2.5]]);
    const other = new Registry();
    showPendingPublications(aggregatorMetrics(other), () => 40_000);
    const merged = AggregatorRegistry.aggregate(await Promise.all([registry, other].map((r) => r.getMetricsAsJSON())));
    expect(await merged.metrics()).toContain('banstream_aggregator_publication_pending_seconds 40');
  });
});
