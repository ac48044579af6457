import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ADD_CLAMPED, ADD_LATE, ADD_OK, ExactSlidingLog, WindowStore, type AddResult, type WindowConfig } from './index.js';

/**
 * Small windows and short times, so sequences hit bucket edges, grace limits and ring
 * limits often. Half the configs make keys exact (exactFrom), at thresholds the ops reach,
 * so every property below also holds for recorded offsets, their caps and cooling.
 */
const configArb = fc
  .record({
    buckets: fc.integer({ min: 1, max: 6 }),
    g: fc.integer({ min: 1, max: 40 }),
    graceMs: fc.integer({ min: 0, max: 200 }),
    maxSkewMs: fc.integer({ min: 0, max: 20 }),
    exactFrom: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
  })
  .map(
    ({ buckets, g, graceMs, maxSkewMs, exactFrom }): WindowConfig => ({
      windowMs: buckets * g,
      buckets,
      graceMs,
      maxSkewMs,
      initialCapacity: 8,
      ...(exactFrom === undefined ? {} : { exactFrom }),
    }),
  );

interface Op {
  key: number;
  advance: number;
  offset: number;
  count: number;
}

const opArb: fc.Arbitrary<Op> = fc.record({
  key: fc.integer({ min: 0, max: 5 }),
  advance: fc.integer({ min: 0, max: 60 }),
  offset: fc.integer({ min: -260, max: 30 }),
  count: fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 1, max: 3 }) }, { weight: 1, arbitrary: fc.integer({ min: 100, max: 300 }) }),
});

const T = 1_000_000;

/** The store under test beside an exact log of the events it should have accepted. */
class Model {
  readonly store: WindowStore;
  readonly exact: ExactSlidingLog;
  readonly newest = new Map<string, number>();
  now = T;

  constructor(readonly config: WindowConfig) {
    this.store = new WindowStore(config);
    this.exact = new ExactSlidingLog({ windowMs: config.windowMs });
  }

  get g(): number {
    return this.config.windowMs / this.config.buckets;
  }

  /** The status the rules promise: late beyond grace or ring, clamped beyond skew. */
  expected(key: string, eventTime: number): { status: AddResult; time: number } {
    const { graceMs, maxSkewMs = 1000 } = this.config;
    if (eventTime < this.now - graceMs) return { status: ADD_LATE, time: eventTime };
    const clamped = eventTime > this.now + maxSkewMs;
    const time = clamped ? this.now + maxSkewMs : eventTime;
    const newest = this.newest.get(key);
    if (newest !== undefined && Math.floor(time / this.g) <= Math.floor(newest / this.g) - (this.config.buckets + 1)) {
      return { status: ADD_LATE, time };
    }
    return { status: clamped ? ADD_CLAMPED : ADD_OK, time };
  }

  apply(op: Op): void {
    this.now += op.advance;
    const key = `k${op.key}`;
    const eventTime = this.now + op.offset;
    const want = this.expected(key, eventTime);
    expect(this.store.add(key, eventTime, op.count, this.now)).toBe(want.status);
    if (want.status === ADD_LATE) return;
    this.exact.add(key, want.time, op.count);
    this.newest.set(key, Math.max(want.time, this.newest.get(key) ?? -Infinity));
  }

  /** Query times at or after the key's newest event, across a little more than a window. */
  queryTimes(key: string): number[] {
    const from = Math.max(this.now, this.newest.get(key) ?? this.now);
    const w = this.config.windowMs;
    return [0, 1, this.g - 1, Math.floor(w / 2), w - 1, w, w + this.g].map((d) => from + d);
  }

  keys(): string[] {
    return [...this.newest.keys()];
  }
}

function replay(config: WindowConfig, ops: Op[]): Model {
  const model = new Model(config);
  for (const op of ops) model.apply(op);
  return model;
}

const runs = { numRuns: 200 };

describe('window store properties', () => {
  it('estimate lies between the fully covered buckets and the enclosing ones; the upper bound also above the exact count', () => {
    fc.assert(
      fc.property(configArb, fc.array(opArb, { maxLength: 60 }), (config, ops) => {
        const model = new Model(config);
        const n = config.buckets;
        const g = model.g;
        for (const op of ops) {
          model.apply(op);
          for (const key of model.keys()) {
            for (const at of model.queryTimes(key)) {
              const c = Math.floor(at / g);
              const est = model.store.estimate(key, at);
              const covered = model.exact.countBetween(key, (c - n + 1) * g, at);
              const enclosing = model.exact.countBetween(key, (c - n) * g, at);
              expect(est).toBeGreaterThanOrEqual(0);
              expect(est).toBeGreaterThanOrEqual(covered - 1e-9);
              expect(est).toBeLessThanOrEqual(enclosing + 1e-9);
              const upper = model.store.upperBound(key, at);
              expect(upper).toBeGreaterThanOrEqual(Math.max(est, model.exact.count(key, at)));
              expect(upper).toBeLessThanOrEqual(enclosing);
            }
          }
        }
        // Also for queries about the past: whatever is asked, never below zero.
        for (const key of model.keys()) expect(model.store.estimate(key, model.now - 3 * config.windowMs)).toBeGreaterThanOrEqual(0);
      }),
      runs,
    );
  });

  it('counts a late event inside the grace period in full when its bucket is fully covered, and not at all beyond it', () => {
    fc.assert(
      fc.property(configArb, fc.array(opArb, { maxLength: 30 }), fc.integer({ min: 0, max: 400 }), fc.integer({ min: 1, max: 5 }), (config, ops, lag, count) => {
        const model = replay(config, ops);
        const key = 'k0';
        const at = Math.max(model.now, model.newest.get(key) ?? model.now);
        const before = model.store.estimate(key, at);
        const eventTime = model.now - lag;
        const want = model.expected(key, eventTime);
        expect(model.store.add(key, eventTime, count, model.now)).toBe(want.status);
        const delta = model.store.estimate(key, at) - before;
        const c = Math.floor(at / model.g);
        const b = Math.floor(eventTime / model.g);
        if (want.status === ADD_LATE) expect(delta).toBe(0);
        else if (b >= c - config.buckets + 1) expect(delta).toBeCloseTo(count, 9);
        else if (b < c - config.buckets) expect(delta).toBe(0);
      }),
      runs,
    );
  });

  it('is exact when each bucket holds events of a single ms (bursts)', () => {
    const burstArb = fc.array(fc.record({ gap: fc.integer({ min: 1, max: 3 }), offset: fc.nat(), count: fc.integer({ min: 1, max: 400 }) }), { minLength: 1, maxLength: 25 });
    fc.assert(
      fc.property(configArb, burstArb, fc.nat(), (config, bursts, probe) => {
        const store = new WindowStore({ ...config, graceMs: 0 });
        const exact = new ExactSlidingLog({ windowMs: config.windowMs });
        const g = config.windowMs / config.buckets;
        let bucket = Math.floor(T / g);
        let last = 0;
        for (const { gap, offset, count } of bursts) {
          bucket += gap;
          last = bucket * g + (offset % g);
          expect(store.add('k', last, count, last)).toBe(ADD_OK);
          exact.add('k', last, count);
        }
        const at = last + (probe % (2 * config.windowMs));
        expect(store.estimate('k', at)).toBe(exact.count('k', at));
      }),
      runs,
    );
  });

  it('is exact for keys exact from their first event (exactFrom = 1) while no lane passes its cap', () => {
    const smallOps = fc.array(
      opArb.map((op) => ({ ...op, count: Math.min(op.count, 3) })),
      { maxLength: 60 },
    );
    fc.assert(
      fc.property(configArb, smallOps, (config, ops) => {
        const model = new Model({ ...config, exactFrom: 1 });
        for (const op of ops) {
          model.apply(op);
          for (const key of model.keys()) {
            for (const at of model.queryTimes(key)) {
              const exact = model.exact.count(key, at);
              expect(model.store.estimate(key, at)).toBe(exact);
              expect(model.store.upperBound(key, at)).toBe(exact);
            }
          }
        }
      }),
      runs,
    );
  });

  it('is exact for an exact key whose events come in any order', () => {
    const eventsArb = fc.array(fc.record({ at: fc.nat(), count: fc.integer({ min: 1, max: 3 }) }), { minLength: 1, maxLength: 80 });
    fc.assert(
      fc.property(configArb, eventsArb, fc.array(fc.nat(), { minLength: 1, maxLength: 10 }), (config, events, probes) => {
        const w = config.windowMs;
        // Every event within one window before `now` and inside the grace period: none is late.
        const store = new WindowStore({ ...config, graceMs: w, exactFrom: 1 });
        const exact = new ExactSlidingLog({ windowMs: w });
        const now = T + w;
        for (const { at, count } of events) {
          expect(store.add('k', T + (at % w), count, now)).toBe(ADD_OK);
          exact.add('k', T + (at % w), count);
        }
        for (const probe of probes) {
          const at = now + (probe % (w + 2));
          expect(store.estimate('k', at)).toBe(exact.count('k', at));
        }
      }),
      runs,
    );
  });

  it('evicts exactly the idle keys, and nothing a later window could see', () => {
    fc.assert(
      fc.property(configArb, fc.array(opArb, { maxLength: 50 }), fc.integer({ min: 0, max: 600 }), (config, ops, later) => {
        const model = replay(config, ops);
        // The same operations again: the store as it was before eviction.
        const before = replay(config, ops).store;
        const now = model.now + later;
        const g = model.g;
        const idleBelow = Math.floor((now - config.graceMs - config.windowMs + 1) / g);
        const idle = model.keys().filter((k) => Math.floor(model.newest.get(k)! / g) < idleBelow);
        expect(model.store.evictIdle(now)).toBe(idle.length);
        expect(model.store.size).toBe(model.keys().length - idle.length);
        for (const key of model.keys()) {
          const isIdle = idle.includes(key);
          expect(model.store.has(key)).toBe(!isIdle);
          for (const at of [now - config.graceMs, now, now + g, now + config.windowMs]) {
            expect(model.store.estimate(key, at)).toBe(before.estimate(key, at));
            if (isIdle) expect(before.estimate(key, at)).toBe(0);
          }
        }
      }),
      runs,
    );
  });

  it('keeps every key and its count through growth from a tiny table', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ maxLength: 12 }), { minLength: 1, maxLength: 3000 }), (keys) => {
        const store = new WindowStore({ windowMs: 60_000, buckets: 4, graceMs: 0, initialCapacity: 8 });
        keys.forEach((key, i) => store.add(key, T, (i % 5) + 1, T));
        expect(store.size).toBe(keys.length);
        keys.forEach((key, i) => expect(store.estimate(key, T)).toBe((i % 5) + 1));
      }),
      { numRuns: 30 },
    );
  });
});
