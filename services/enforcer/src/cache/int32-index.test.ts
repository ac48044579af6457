import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Int32Index } from './int32-index.js';

describe('Int32Index', () => {
  it('behaves like a Map under any sequence of sets and deletes (keys crowded into few slots)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.oneof(fc.integer({ min: -8, max: 8 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })), fc.nat({ max: 2 ** 31 - 2 })), { maxLength: 400 }),
        (ops) => {
          const index = new Int32Index(4);
          const model = new Map<number, number>();
          for (const [isSet, key, value] of ops) {
            if (isSet) {
              expect(index.set(key, value)).toBe(model.get(key) ?? -1);
              model.set(key, value);
            } else {
              expect(index.delete(key)).toBe(model.get(key) ?? -1);
              model.delete(key);
            }
            expect(index.size).toBe(model.size);
          }
          for (const [k, v] of model) expect(index.get(k)).toBe(v);
          for (const [, key] of ops) if (!model.has(key)) expect(index.get(key)).toBe(-1);
          expect(new Map(index.entries())).toEqual(model);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('matches a Map over long runs of sets, replacements and deletes that grow it many times', () => {
    fc.assert(
      fc.property(
        // Keys from a small pool (many replacements, deletes that hit) or from anywhere in int32.
        fc.array(fc.tuple(fc.constantFrom('set', 'set', 'delete'), fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })), fc.nat({ max: 2 ** 31 - 2 })), {
          minLength: 500,
          maxLength: 3_000,
        }),
        (ops) => {
          const index = new Int32Index(2); // 16 slots: 3,000 keys take eight growths
          const model = new Map<number, number>();
          // Disagreements step by step, compared once at the end (an expect per step is most of the run time).
          const wrong: string[] = [];
          ops.forEach(([op, key, value], step) => {
            if (op === 'set') {
              index.set(key, value);
              model.set(key, value);
            } else {
              if (index.delete(key) !== (model.get(key) ?? -1)) wrong.push(`${step}: delete ${key}`);
              model.delete(key);
            }
            if (index.size !== model.size) wrong.push(`${step}: size ${index.size}, not ${model.size}`);
          });
          expect(wrong).toEqual([]);
          for (const [key, value] of model) expect(index.get(key)).toBe(value);
          expect(new Map(index.entries())).toEqual(model);
        },
      ),
      { numRuns: 50 },
    );
  }, 60_000);

  it('refuses a key that is not an int32, or a value it cannot store, rather than storing another one', () => {
    const index = new Int32Index();
    expect(() => index.set(2 ** 31, 1)).toThrow(/int32/);
    expect(() => index.set(1.5, 1)).toThrow(/int32/);
    expect(() => index.set(1, -1)).toThrow(RangeError);
    expect(() => index.set(1, 2 ** 31 - 1)).toThrow(RangeError);
    expect(() => index.set(1, 0.5)).toThrow(RangeError);
    expect(index.size).toBe(0);
  });

  it('touch reads the key of the home slot, for any key, present or not', () => {
    const index = new Int32Index(2);
    expect(index.touch(12345)).toBe(0);
    index.set(12345, 1);
    expect(index.touch(12345)).toBe(12345);
  });

  it('a scan paused between steps visits every key present throughout, whatever sets, deletes and growth happen meanwhile', () => {
    fc.assert(
      fc.property(
        // Keys present throughout, and others set and deleted around them (shifting them back, growing the table).
        fc.array(fc.integer({ min: -100, max: 100 }), { minLength: 10, maxLength: 100 }),
        fc.array(fc.tuple(fc.constantFrom('set', 'delete', 'step'), fc.integer({ min: 101, max: 200 }), fc.integer({ min: 1, max: 4 })), { minLength: 100, maxLength: 400 }),
        (initial, ops) => {
          const index = new Int32Index(2);
          let version = 0;
          // Each set stores a fresh value, so a visit names the one write it saw.
          const put = (key: number) => index.set(key, version++);
          for (const key of initial) put(key);
          const throughout = new Map(index.entries());
          const everPresent = new Set([...throughout].map(([k, v]) => `${k}#${v}`));
          const visited = new Set<string>();
          const visit = (k: number, v: number) => visited.add(`${k}#${v}`);
          const scan = index.openScan();
          let done = false;
          for (const [op, key, slots] of ops) {
            if (done) break;
            if (op === 'step') done = index.scanStep(scan, slots, visit);
            else {
              throughout.delete(key);
              if (op === 'set') {
                put(key);
                everPresent.add(`${key}#${index.get(key)}`);
              } else index.delete(key);
            }
          }
          while (!done) done = index.scanStep(scan, 7, visit);
          index.closeScan(scan);
          for (const [k, v] of throughout) expect(visited).toContain(`${k}#${v}`);
          for (const seen of visited) expect(everPresent).toContain(seen);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a scan visits a key a delete shifts back behind it', () => {
    const sharing = keysSharingAHome(3);
    const index = new Int32Index(2);
    for (const key of sharing) index.set(key, key);
    const scan = index.openScan();
    const visited: number[] = [];
    const home = sharing.home;
    // Up to the home slot: sharing[0] is visited, sharing[1] and [2] sit just after it.
    index.scanStep(scan, home + 1, (k) => visited.push(k));
    expect(visited).toEqual([sharing[0]]);
    index.delete(sharing[0]!);
    while (!index.scanStep(scan, 1, (k) => visited.push(k)));
    expect(visited.sort()).toEqual([...sharing].sort());
  });

  it('forgets a closed scan: later deletes feed it nothing', () => {
    const index = new Int32Index(2);
    for (let k = 0; k < 50; k++) index.set(k, k);
    const scan = index.openScan();
    index.scanStep(scan, 8, () => undefined);
    index.closeScan(scan);
    for (let k = 0; k < 50; k++) index.delete(k);
    expect(scan.moved).toEqual([]);
  });
});

/**
 * `n` keys with one home slot in a table of 16 slots, and that slot: found by scanning
 * a table holding one key at a time, one slot per step, until the key is visited.
 */
function keysSharingAHome(n: number): number[] & { home: number } {
  const homeSlot = (key: number) => {
    const alone = new Int32Index(2);
    alone.set(key, 0);
    const scan = alone.openScan();
    for (let slot = 0; ; slot++) {
      let seen = false;
      alone.scanStep(scan, 1, () => (seen = true));
      if (seen) return slot;
    }
  };
  const target = homeSlot(0);
  const keys: number[] = [];
  for (let key = 0; keys.length < n; key++) if (homeSlot(key) === target) keys.push(key);
  return Object.assign(keys, { home: target });
}
