import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DROP_REASONS, EventBuffer, type BufferStats } from './event-buffer.js';

const droppedTotal = (s: BufferStats) => DROP_REASONS.reduce((n, r) => n + s.dropped[r], 0);
/** The accounting identity the publisher promises. */
const balanced = (s: BufferStats) => s.published === s.delivered + droppedTotal(s) + s.pendingEvents + s.inFlightEvents;

describe('EventBuffer', () => {
  it('drops the oldest pending events first when the budget is exceeded, never the in-flight ones', () => {
    const b = new EventBuffer<string>(300);
    b.push('a', 100);
    b.push('b', 100);
    const sent = b.take(1, 1_000);
    expect(sent.map((p) => p.value)).toEqual(['a']);
    b.push('c', 100);
    expect(b.push('d', 100)).toBe(1); // b, the oldest pending, goes; a is in flight
    expect(b.push('e', 150)).toBe(2); // c and d make room for e
    expect(b.take(10, 1_000).map((p) => p.value)).toEqual(['e']);
    const s = b.stats();
    expect(s.dropped.buffer_full).toBe(3);
    expect(s.inFlightBytes).toBe(250);
    expect(balanced(s)).toBe(true);
  });

  it('drops an event larger than the whole budget as too_large and keeps the rest', () => {
    const b = new EventBuffer<string>(100);
    b.push('small', 60);
    expect(b.push('huge', 101)).toBe(0);
    expect(b.stats()).toMatchObject({ published: 2, pendingEvents: 1, dropped: { too_large: 1, buffer_full: 0 } });
  });

  it('offers all or nothing, and a refusal is neither published nor dropped', () => {
    const b = new EventBuffer<string>(250);
    expect(b.offer(['a', 'b'], [100, 100])).toBe(true);
    expect(b.offer(['c'], [51])).toBe(false);
    expect(b.offer(['c'], [50])).toBe(true);
    const s = b.stats();
    expect(s).toMatchObject({ published: 3, refused: 1, pendingEvents: 3, pendingBytes: 250 });
    expect(droppedTotal(s)).toBe(0);
  });

  it('takes up to a count and a size, but always at least one event', () => {
    const b = new EventBuffer<string>(10_000);
    for (const v of ['a', 'b', 'c', 'd']) b.push(v, 400);
    expect(b.take(10, 100).map((p) => p.value)).toEqual(['a']);
    expect(b.take(10, 800).map((p) => p.value)).toEqual(['b', 'c']);
    expect(b.take(0, 800)).toEqual([]);
  });

  it('keeps published = delivered + dropped + pending + in flight, within the budget, whatever happens', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('push' as const), bytes: fc.integer({ min: 1, max: 400 }) }),
      fc.record({ kind: fc.constant('offer' as const), sizes: fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 5 }) }),
      fc.record({ kind: fc.constant('take' as const), events: fc.integer({ min: 0, max: 6 }), bytes: fc.integer({ min: 1, max: 500 }) }),
      fc.record({ kind: fc.constant('settle' as const), outcome: fc.constantFrom('delivered' as const, 'rejected' as const) }),
      fc.record({ kind: fc.constant('dropPending' as const) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 50, max: 2_000 }), fc.array(op, { maxLength: 200 }), (budget, ops) => {
        const b = new EventBuffer<number>(budget);
        const inFlight: ReturnType<typeof b.take>[] = [];
        let next = 0;
        for (const o of ops) {
          if (o.kind === 'push') b.push(next++, o.bytes);
          else if (o.kind === 'offer')
            b.offer(
              o.sizes.map(() => next++),
              o.sizes,
            );
          else if (o.kind === 'take') inFlight.push(b.take(o.events, o.bytes));
          else if (o.kind === 'dropPending') b.dropPending('shutdown');
          else {
            const send = inFlight.shift();
            if (send === undefined) continue;
            b.settle(send, o.outcome);
          }
          const s = b.stats();
          // Only an oversized in-flight set could exceed the budget, and take() never creates one from a budgeted buffer.
          if (s.pendingBytes + s.inFlightBytes > budget) return false;
          if (!balanced(s)) return false;
        }
        return true;
      }),
      { numRuns: 500 },
    );
  });

  it('drops in publication order: what survives an overflow is always the newest', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 300 }), (sizes) => {
        const b = new EventBuffer<number>(500);
        sizes.forEach((size, i) => b.push(i, size));
        const kept = b.take(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER).map((p) => p.value);
        const n = kept.length;
        return n > 0 && kept.every((v, i) => v === sizes.length - n + i);
      }),
    );
  });
});
