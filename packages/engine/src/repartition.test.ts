import { describe, expect, it } from 'vitest';
import { loadSchemaCatalog, SCHEMA_NAMES, type SubjectCountBatch } from '@banstream/schemas';
import { AppliedOffsets, MAX_BATCH_BYTES, RepartitionBuffer } from './repartition.js';
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
    expect(all.filter((e) => e.subject === 'country:FR').map((e) => [e.offset, e.count])).toEqual([
      [100, 3],
      [101, 1],
    ]);
    expect(buffer.take()).toEqual([]);
  });
});

/** The entries AppliedOffsets finds fresh in `batch`. */
const freshIn = (applied: AppliedOffsets, batch: SubjectCountBatch) => applied.fresh(batch).map((i) => batch.entries[i]!);

describe('AppliedOffsets', () => {
  const entry = (offset: number, seq = 0) => ({ offset, policyId: 'p', subject: 'user:1', timestamp: 0, count: 1, seq });

  it('applies each events record once, whatever batches a new owner re-sends it in', () => {
    const applied = new AppliedOffsets();
    expect(freshIn(applied, { sourcePartition: 1, entries: [entry(5), entry(6)] }).map((e) => e.offset)).toEqual([5, 6]);
    expect(freshIn(applied, { sourcePartition: 1, entries: [entry(5), entry(6), entry(7)] }).map((e) => e.offset)).toEqual([7]);
    expect(freshIn(applied, { sourcePartition: 2, entries: [entry(5)] }).map((e) => e.offset)).toEqual([5]);
    expect(freshIn(applied, { sourcePartition: 1, entries: [entry(7)] })).toEqual([]);
  });

  it('applies each part of a record sent in several batches once, and none of them twice when re-sent', () => {
    const applied = new AppliedOffsets();
    const first = { sourcePartition: 1, entries: [entry(5, 0), entry(5, 1)] };
    const second = { sourcePartition: 1, entries: [entry(5, 2), entry(6, 0)] };
    expect(freshIn(applied, first).map((e) => [e.offset, e.seq])).toEqual([
      [5, 0],
      [5, 1],
    ]);
    expect(freshIn(applied, second).map((e) => [e.offset, e.seq])).toEqual([
      [5, 2],
      [6, 0],
    ]);
    expect(freshIn(applied, first)).toEqual([]);
    expect(freshIn(applied, second)).toEqual([]);
    expect(freshIn(applied, { sourcePartition: 1, entries: [entry(6, 0), entry(6, 1)] }).map((e) => [e.offset, e.seq])).toEqual([[6, 1]]);
  });

  it('gives the places of the fresh entries in their batch, out of order ones included (a failure names entries[i] of the record)', () => {
    const applied = new AppliedOffsets();
    applied.fresh({ sourcePartition: 1, entries: [entry(4)] });
    expect(applied.fresh({ sourcePartition: 1, entries: [entry(5), entry(3), entry(7), entry(4)] })).toEqual([0, 2]);
  });
});

describe('RepartitionBuffer batches under the record size limit', () => {
  it('splits one events record with 30,000 distinct users into batches that each encode under MAX_BATCH_BYTES, applied whole once', () => {
    const codec = loadSchemaCatalog().codec(SCHEMA_NAMES.subjectCountBatch);
    const buffer = new RepartitionBuffer(3, 1);
    buffer.begin(41);
    buffer.add('per-user', 'user:0', 1000, 1);
    buffer.begin(42);
    for (let i = 0; i < 30_000; i++) buffer.add('per-user', `user:${'u'.repeat(20)}${i}`, 1000, 1);
    const out = buffer.take();
    expect(out.length).toBeGreaterThan(1);
    for (const o of out) expect(codec.encode(o.batch).length).toBeLessThanOrEqual(MAX_BATCH_BYTES);
    const applied = new AppliedOffsets();
    const counted = out.flatMap((o) => freshIn(applied, codec.decode(codec.encode(o.batch))));
    expect(counted).toHaveLength(30_001);
    expect(new Set(counted.map((e) => `${e.offset}/${e.seq}`)).size).toBe(30_001);
    expect(out.flatMap((o) => freshIn(applied, o.batch))).toEqual([]);
  });
});
