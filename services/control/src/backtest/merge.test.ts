import { describe, expect, it } from 'vitest';
import { TimeMerge } from './merge.js';

const item = (p: number, timestamp: number) => ({ p, timestamp });

describe('TimeMerge', () => {
  it('releases items in time order once every open partition has one queued', () => {
    const merge = new TimeMerge<{ p: number; timestamp: number }>([0, 1]);
    merge.push(0, item(0, 10));
    merge.push(0, item(0, 30));
    expect([...merge.drain()]).toEqual([]);
    merge.push(1, item(1, 20));
    expect([...merge.drain()].map((i) => i.timestamp)).toEqual([10, 20]);
    merge.end(1);
    expect([...merge.drain()].map((i) => i.timestamp)).toEqual([30]);
    expect(merge.done).toBe(false);
    merge.end(0);
    expect(merge.done).toBe(true);
  });

  it('keeps the order within a partition even when its times go back', () => {
    const merge = new TimeMerge<{ p: number; timestamp: number }>([0]);
    for (const t of [5, 3, 4]) merge.push(0, item(0, t));
    merge.end(0);
    expect([...merge.drain()].map((i) => i.timestamp)).toEqual([5, 3, 4]);
  });

  it('counts what is queued per partition', () => {
    const merge = new TimeMerge<{ p: number; timestamp: number }>([0, 1]);
    for (let i = 0; i < 5000; i++) merge.push(0, item(0, i));
    merge.push(1, item(1, 2500.5));
    const first = [...merge.drain()];
    expect(first).toHaveLength(2502);
    expect(merge.queuedIn(0)).toBe(2499);
    merge.end(1);
    expect([...merge.drain()]).toHaveLength(2499);
  });
});
