import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExactSlidingLog } from './exact-log.js';

describe('ExactSlidingLog', () => {
  it('counts events in (at - W, at]', () => {
    const log = new ExactSlidingLog({ windowMs: 100 });
    log.add('k', 10);
    log.add('k', 50, 3);
    log.add('k', 109);
    expect(log.count('k', 109)).toBe(5);
    expect(log.count('k', 110)).toBe(4); // the event at 10 has left
    expect(log.count('k', 150)).toBe(1);
    expect(log.count('nobody', 150)).toBe(0);
    expect(log.newest('k')).toBe(109);
  });

  it('agrees with a plain scan, also with out-of-order events and pruning', () => {
    const eventArb = fc.record({ t: fc.integer({ min: 0, max: 2_000 }), count: fc.integer({ min: 1, max: 4 }) });
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 300 }), fc.array(fc.integer({ min: 0, max: 2_200 }), { maxLength: 20 }), (events, ats) => {
        const log = new ExactSlidingLog({ windowMs: 100, retainMs: 5_000 });
        for (const e of events) log.add('k', e.t, e.count);
        for (const at of ats) {
          const scan = events.filter((e) => e.t > at - 100 && e.t <= at).reduce((n, e) => n + e.count, 0);
          expect(log.count('k', at)).toBe(scan);
        }
      }),
    );
  });

  it('forgets events older than the retention behind the newest, compacting as it goes', () => {
    const log = new ExactSlidingLog({ windowMs: 10, retainMs: 5 });
    for (let t = 0; t < 1_000; t++) log.add('k', t);
    expect(log.count('k', 999)).toBe(10);
    expect(log.countBetween('k', 0, 999)).toBeLessThan(200);
  });
});
