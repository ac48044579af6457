import { describe, expect, it } from 'vitest';
import { AppliedOffsets, RepartitionBuffer } from './repartition.js';
import { partitionFor } from './routing.js';

describe('RepartitionBuffer', () => {
  it('sums per record, policy, subject and time, and sends each subject to its owner partition', () => {
    const buffer = new RepartitionBuffer(4, 12);
    buffer.begin(100);
    for (let i = 0; i < 3; i++) buffer.add('geo', 'country:FR', 5000, 1);
    buffer.add('per-user', 'user:1', 5001, 1);
    buffer.begin(101);
    buffer.add('geo', 'country:FR', 5000, 1);
    const out = buffer.take();
    expect(buffer.size).toBe(0);
    const all = out.flatMap((o) => o.batch.entries.map((e) => ({ ...e, partition: o.partition, source: o.batch.sourcePartition })));
    expect(all).toHaveLength(3);
    for (const e of all) {
      expect(e.partition).toBe(partitionFor(e.subject, 12));
      expect(e.source).toBe(4);
    }
    expect(all.filter((e) => e.subject === 'country:FR').map((e) => [e.offset, e.count])).toEqual([[100, 3], [101, 1]]);
    expect(buffer.take()).toEqual([]);
  });
});

describe('AppliedOffsets', () => {
  const entry = (offset: number) => ({ offset, policyId: 'p', subject: 'user:1', timestamp: 0, count: 1 });

  it('applies each events record once, whatever batches a new owner re-sends it in', () => {
    const applied = new AppliedOffsets();
    expect(applied.fresh({ sourcePartition: 1, entries: [entry(5), entry(6)] }).map((e) => e.offset)).toEqual([5, 6]);
    expect(applied.fresh({ sourcePartition: 1, entries: [entry(5), entry(6), entry(7)] }).map((e) => e.offset)).toEqual([7]);
    expect(applied.fresh({ sourcePartition: 2, entries: [entry(5)] }).map((e) => e.offset)).toEqual([5]);
    expect(applied.fresh({ sourcePartition: 1, entries: [entry(7)] })).toEqual([]);
  });
});
