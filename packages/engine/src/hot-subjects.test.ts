import { describe, expect, it } from 'vitest';
import { HotSubjects, nearestThreshold, toWindowCount } from './hot-subjects.js';

describe('HotSubjects', () => {
  it('tracks subjects from the share of the threshold on, spaced by the interval except at the crossing', () => {
    const hot = new HotSubjects(0.5, 1000);
    hot.update('p|ip:a', 'p', 'ip:a', 60_000, 100, 49, 1);
    expect(hot.size).toBe(0);
    hot.update('p|ip:a', 'p', 'ip:a', 60_000, 100, 50, 2);
    expect(hot.due(0).map((e) => e.count)).toEqual([50]);
    hot.update('p|ip:a', 'p', 'ip:a', 60_000, 100, 60, 3);
    expect(hot.due(500)).toEqual([]);
    hot.update('p|ip:a', 'p', 'ip:a', 60_000, 100, 101, 4);
    expect(hot.due(600).map((e) => e.count)).toEqual([101]);
    hot.update('p|ip:a', 'p', 'ip:a', 60_000, 100, 102, 5);
    expect(hot.due(1599)).toEqual([]);
    expect(hot.due(1600).map((e) => e.count)).toEqual([102]);
    expect(hot.due(5000)).toEqual([]);
  });

  it('cools a subject down under the share, with its final count', () => {
    const hot = new HotSubjects(0.5, 1000);
    hot.update('p|ip:a', 'p', 'ip:a', 60_000, 100, 80, 10);
    expect(hot.cool(10, () => 0)).toEqual([]);
    expect(hot.cool(20, () => 60)).toEqual([]);
    const [cooled] = hot.cool(30, () => 40);
    expect(toWindowCount(cooled!, 'subject', true)).toEqual({
      policyId: 'p',
      subject: 'ip:a',
      kind: 'subject',
      count: 40,
      windowSeconds: 60,
      threshold: 100,
      observedAt: 30,
      final: true,
    });
    expect(hot.size).toBe(0);
  });

  it('picks the few subjects nearest their threshold, highest share first', () => {
    const hot = new HotSubjects(0, 1000);
    const counts = [5, 90, 40, 99, 70, 10];
    counts.forEach((c, i) => hot.update(`p|ip:${i}`, 'p', `ip:${i}`, 60_000, 100, c, 1));
    hot.update('q|user:a', 'q', 'user:a', 60_000, 10, 9, 1); // 90% of a smaller threshold
    expect(nearestThreshold(hot.values(), 3).map((e) => e.subject)).toEqual(['ip:3', 'ip:1', 'user:a']);
    expect(nearestThreshold(hot.values(), 10)).toHaveLength(7);
    expect(nearestThreshold([], 3)).toEqual([]);
  });
});
