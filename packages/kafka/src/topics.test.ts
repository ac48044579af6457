import { describe, expect, it } from 'vitest';
import { topicSpecs } from './topics.js';

describe('topicSpecs', () => {
  const specs = topicSpecs({ prefix: 'banstream.', partitions: 12, replicationFactor: 3 });
  const byName = Object.fromEntries(specs.map((s) => [s.name, s]));

  it('names the topics of the design under the prefix', () => {
    expect(specs.map((s) => s.name)).toEqual([
      'banstream.events.v1',
      'banstream.bans.v1',
      'banstream.counts.v1',
      'banstream.policies.v1',
      'banstream.allowlist.v1',
      'banstream.alerts.v1',
      'banstream.audit.v1',
      'banstream.dlq.v1',
      'banstream.aggregator-subjects.v1',
      'banstream.aggregator-baselines.v1',
      'banstream.feeds.v1',
      'banstream.ban-history.v1',
    ]);
  });

  it('compacts the state topics and deletes the streams after their retention', () => {
    for (const t of ['bans', 'counts', 'policies', 'allowlist', 'aggregator-baselines', 'feeds']) expect(byName[`banstream.${t}.v1`]?.configs['cleanup.policy']).toBe('compact');
    for (const t of ['events', 'alerts', 'audit', 'dlq', 'ban-history']) expect(byName[`banstream.${t}.v1`]?.configs['cleanup.policy']).toBe('delete');
    expect(Number(byName['banstream.audit.v1']?.configs['retention.ms'])).toBeGreaterThan(Number(byName['banstream.alerts.v1']?.configs['retention.ms']));
  });

  it('keeps the ban history TOPIC_BAN_HISTORY_RETENTION_DAYS, 180 days unless set', () => {
    expect(byName['banstream.ban-history.v1']?.configs['retention.ms']).toBe(String(180 * 24 * 3_600_000));
    const year = topicSpecs({ prefix: '', partitions: 1, replicationFactor: 1, banHistoryRetentionMs: 365 * 24 * 3_600_000 });
    expect(year.find((s) => s.name === 'ban-history.v1')?.configs['retention.ms']).toBe(String(365 * 24 * 3_600_000));
  });

  it('keeps events at least a day and at least twice the longest window', () => {
    expect(byName['banstream.events.v1']?.configs['retention.ms']).toBe(String(24 * 3_600_000));
    const long = topicSpecs({ prefix: '', partitions: 1, replicationFactor: 1, longestWindowMs: 3 * 24 * 3_600_000 });
    expect(long[0]?.configs['retention.ms']).toBe(String(6 * 24 * 3_600_000));
  });

  it("dates the aggregator's input records by the broker's clock, which no producer chooses", () => {
    const appendTimed = specs.filter((s) => s.configs['message.timestamp.type'] === 'LogAppendTime').map((s) => s.name);
    expect(appendTimed).toEqual(['banstream.events.v1', 'banstream.aggregator-subjects.v1']);
  });

  it('partitions the high-volume topics and keeps control topics on one partition', () => {
    expect(byName['banstream.events.v1']?.numPartitions).toBe(12);
    expect(byName['banstream.aggregator-subjects.v1']?.numPartitions).toBe(12);
    expect(byName['banstream.aggregator-baselines.v1']?.numPartitions).toBe(12);
    expect(byName['banstream.aggregator-subjects.v1']?.configs['retention.ms']).toBe(byName['banstream.events.v1']?.configs['retention.ms']);
    expect(byName['banstream.policies.v1']?.numPartitions).toBe(1);
    expect(byName['banstream.feeds.v1']?.numPartitions).toBe(1);
    expect(specs.every((s) => s.replicationFactor === 3 && s.configs['min.insync.replicas'] === '2')).toBe(true);
  });
});
