import { describe, expect, it } from 'vitest';
import { OwnerCache } from './owner-cache.js';
import { partitionFor } from './routing.js';

describe('OwnerCache', () => {
  it('gives the partition partitionFor gives', () => {
    const cache = new OwnerCache(12, 100);
    for (let i = 0; i < 1_000; i++) expect(cache.owner(`user:${i % 300}`)).toBe(partitionFor(`user:${i % 300}`, 12));
  });

  it('holds at most two generations under endless churn', () => {
    const cache = new OwnerCache(6, 1_000);
    for (let i = 0; i < 100_000; i++) {
      cache.owner(`user:u${i}`);
      expect(cache.size).toBeLessThanOrEqual(2_000);
    }
    expect(cache.size).toBeGreaterThan(1_000);
  });

  it('keeps a subject that keeps coming back across generations', () => {
    const computed = new Map<string, number>();
    const cache = new OwnerCache(6, 100, (s, n) => {
      computed.set(s, (computed.get(s) ?? 0) + 1);
      return partitionFor(s, n);
    });
    for (let i = 0; i < 10_000; i++) {
      cache.owner(`user:u${i}`);
      if (i % 50 === 0) cache.owner('country:FR');
    }
    expect(computed.get('country:FR')).toBe(1);
    expect(computed.get('user:u5')).toBe(1);
    cache.owner('user:u5'); // long gone from both generations: computed again
    expect(computed.get('user:u5')).toBe(2);
  });
});
