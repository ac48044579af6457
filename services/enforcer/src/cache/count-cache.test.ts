import { describe, expect, it } from 'vitest';
import type { WindowCount } from '@banstream/schemas';
import { CountCache } from './count-cache.js';

const NOW = 1_000_000;
const count = (policyId: string, subject: string, over: Partial<WindowCount> = {}): WindowCount =>
  ({ policyId, subject, kind: 'ip', count: 10, windowSeconds: 60, threshold: 5, observedAt: NOW, final: false, ...over }) as WindowCount;

describe('CountCache', () => {
  it('says which policies hold a count, through updates, final records, tombstones and purges', () => {
    const cache = new CountCache();
    expect(cache.holds('a')).toBe(false);
    cache.observe('a|ip:1', count('a', 'ip:1'));
    cache.observe('a|ip:1', count('a', 'ip:1', { count: 20 }));
    cache.observe('a|ip:2', count('a', 'ip:2'));
    cache.observe('b|ip:1', count('b', 'ip:1', { observedAt: NOW - 120_000 }));
    expect([cache.holds('a'), cache.holds('b'), cache.size]).toEqual([true, true, 3]);
    cache.observe('a|ip:1', count('a', 'ip:1', { final: true }));
    expect(cache.holds('a')).toBe(true);
    cache.observe('a|ip:2', null);
    expect(cache.holds('a')).toBe(false);
    // A tombstone for a key never seen changes nothing.
    cache.observe('a|ip:3', null);
    expect(cache.holds('a')).toBe(false);
    expect(cache.purgeStale(NOW)).toBe(1);
    expect([cache.holds('b'), cache.size]).toEqual([false, 0]);
  });

  it('answers a fresh count and not a stale one', () => {
    const cache = new CountCache();
    cache.observe('a|ip:1', count('a', 'ip:1', { observedAt: NOW - 59_000 }));
    expect(cache.get('a', 'ip:1', NOW)?.count).toBe(10);
    expect(cache.get('a', 'ip:1', NOW + 1_000)).toBeUndefined();
  });
});
