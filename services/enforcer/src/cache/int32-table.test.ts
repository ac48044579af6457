import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Int32Table } from './int32-table.js';

describe('Int32Table', () => {
  it('behaves like a Map under any sequence of sets and deletes (keys crowded into few slots)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.oneof(fc.integer({ min: -8, max: 8 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })), fc.nat()), { maxLength: 400 }), (ops) => {
        const table = new Int32Table<number>(4);
        const model = new Map<number, number>();
        for (const [isSet, key, value] of ops) {
          if (isSet) {
            table.set(key, value);
            model.set(key, value);
          } else {
            expect(table.delete(key)).toBe(model.delete(key));
          }
          expect(table.size).toBe(model.size);
        }
        for (const [k, v] of model) expect(table.get(k)).toBe(v);
        for (const [, key] of ops) if (!model.has(key)) expect(table.get(key)).toBeUndefined();
        expect(new Map(table.entries())).toEqual(model);
      }),
      { numRuns: 300 },
    );
  });

  it('matches a Map, fields included, over long runs of sets, replacements and deletes that grow it many times and reuse freed entries', () => {
    fc.assert(
      fc.property(
        // Keys from a small pool (many replacements, deletes that hit) or from anywhere in int32.
        fc.array(fc.tuple(fc.constantFrom('set', 'set', 'delete', 'memo'), fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })), fc.nat()), {
          minLength: 500,
          maxLength: 3_000,
        }),
        (ops) => {
          const table = new Int32Table<number>(2, 2); // 16 slots: 3,000 keys take eight growths
          const model = new Map<number, { value: number; memo?: number }>();
          // Disagreements step by step, compared once at the end (an expect per step is most of the run time).
          const wrong: string[] = [];
          ops.forEach(([op, key, value], step) => {
            if (op === 'set') {
              const slot = table.set(key, value);
              model.set(key, { value });
              if (table.slotOf(key) !== slot) wrong.push(`${step}: set ${key} returned slot ${slot}, found at ${table.slotOf(key)}`);
            } else if (op === 'delete') {
              if (table.delete(key) !== model.delete(key)) wrong.push(`${step}: delete ${key}`);
            } else {
              const slot = table.slotOf(key);
              if (slot >= 0 !== model.has(key)) wrong.push(`${step}: slotOf ${key} is ${slot}`);
              if (slot < 0) return;
              table.setFieldAt(slot, 1, value);
              model.get(key)!.memo = value;
            }
            if (table.size !== model.size) wrong.push(`${step}: size ${table.size}, not ${model.size}`);
          });
          expect(wrong).toEqual([]);
          for (const [key, { value, memo }] of model) {
            const slot = table.slotOf(key);
            expect(table.get(key)).toBe(value);
            expect(table.valueAt(slot)).toBe(value);
            expect(table.fieldAt(slot, 0)).toBeUndefined();
            expect(table.fieldAt(slot, 1)).toBe(memo);
          }
          for (const [, key] of ops) if (!model.has(key)) expect(table.get(key)).toBeUndefined();
          expect(new Map(table.entries())).toEqual(new Map([...model].map(([k, e]) => [k, e.value])));
        },
      ),
      { numRuns: 50 },
    );
  }, 60_000);

  it('refuses a key that is not an int32, rather than storing another one', () => {
    const table = new Int32Table<number>();
    expect(() => table.set(2 ** 31, 1)).toThrow(/int32/);
    expect(() => table.set(1.5, 1)).toThrow(/int32/);
    expect(table.size).toBe(0);
  });

  it('keeps each field beside its entry through deletes that shift entries and growth, and clears them when the entry is set again', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('set', 'delete', 'fields'), fc.integer({ min: -20, max: 20 })), { maxLength: 400 }), fc.integer({ min: 1, max: 4 }), (ops, fields) => {
        const table = new Int32Table<number>(2, fields);
        const written = new Map<number, string>();
        for (const [op, key] of ops) {
          if (op === 'set') {
            table.set(key, key);
            written.delete(key);
          } else if (op === 'delete') {
            table.delete(key);
            written.delete(key);
          } else {
            const slot = table.slotOf(key);
            if (slot < 0) continue;
            for (let n = 0; n < fields; n++) table.setFieldAt(slot, n, `${n} of ${key}`);
            written.set(key, key.toString());
          }
          for (const [k] of table.entries()) {
            const slot = table.slotOf(k);
            expect(table.valueAt(slot)).toBe(k);
            for (let n = 0; n < fields; n++) expect(table.fieldAt(slot, n)).toBe(written.has(k) ? `${n} of ${k}` : undefined);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('returns from set the slot where the entry stays, also when the set made the table grow', () => {
    const table = new Int32Table<number>(2, 1);
    for (let key = 0; key < 100; key++) {
      const slot = table.set(key * 7919, key);
      expect(table.slotOf(key * 7919)).toBe(slot);
      expect(table.valueAt(slot)).toBe(key);
    }
    expect(() => table.setFieldAt(0, 1, 'x')).toThrow(RangeError);
  });

  it('moves a memo with its entry when a delete shifts the entry back into the hole', () => {
    // Keys sharing one home slot, found from outside: a table holding only that key.
    const homeOf = (key: number) => {
      const alone = new Int32Table<number>(2);
      alone.set(key, key);
      return alone.slotOf(key);
    };
    const target = homeOf(0);
    const sharing: number[] = [];
    for (let key = 0; sharing.length < 4; key++) if (homeOf(key) === target) sharing.push(key);
    const table = new Int32Table<number>(2); // 16 slots: four entries do not make it grow
    for (const key of sharing) {
      table.set(key, key);
      table.setFieldAt(table.slotOf(key), 0, `memo ${key}`);
    }
    table.delete(sharing[0]!);
    expect(table.slotOf(sharing[1]!)).toBe(target);
    for (const key of sharing.slice(1)) expect(table.fieldAt(table.slotOf(key), 0)).toBe(`memo ${key}`);
  });

  it('touch reads the key of the home entry, for any key, present or not', () => {
    const table = new Int32Table<number>(2);
    expect(table.touch(12345)).toBe(0);
    table.set(12345, 1);
    expect(table.touch(12345)).toBe(12345);
  });

  it('refuses undefined as a value: it marks an empty slot', () => {
    expect(() => new Int32Table<number | undefined>().set(1, undefined)).toThrow(/cannot be undefined/);
  });

  it('deletes the entries a predicate picks and keeps finding the others', () => {
    const table = new Int32Table<number>();
    for (let k = 0; k < 5000; k++) table.set(k * 7919, k);
    expect(table.deleteWhere((v) => v % 3 === 0)).toBe(1667);
    expect(table.size).toBe(3333);
    for (let k = 0; k < 5000; k++) expect(table.get(k * 7919)).toBe(k % 3 === 0 ? undefined : k);
  });

  it('a scan paused between steps visits every entry present throughout, whatever sets, deletes and growth happen meanwhile', () => {
    fc.assert(
      fc.property(
        // Entries present throughout, and others set and deleted around them (shifting them back, growing the table).
        fc.array(fc.integer({ min: -100, max: 100 }), { minLength: 10, maxLength: 100 }),
        fc.array(fc.tuple(fc.constantFrom('set', 'delete', 'step'), fc.integer({ min: 101, max: 200 }), fc.integer({ min: 1, max: 4 })), { minLength: 100, maxLength: 400 }),
        (initial, ops) => {
          const table = new Int32Table<string>(2);
          let version = 0;
          // Each set stores a fresh value, so a visit names the one write it saw.
          const put = (key: number) => table.set(key, `${key}#${version++}`);
          for (const key of initial) put(key);
          const throughout = new Map(table.entries());
          const everPresent = new Set(throughout.values());
          const visited = new Set<string>();
          const scan = table.openScan();
          let done = false;
          for (const [op, key, slots] of ops) {
            if (done) break;
            if (op === 'step') done = table.scanStep(scan, slots, (v) => visited.add(v));
            else {
              throughout.delete(key);
              if (op === 'set') everPresent.add(put(key) >= 0 ? table.get(key)! : '');
              else table.delete(key);
            }
          }
          while (!done) done = table.scanStep(scan, 7, (v) => visited.add(v));
          table.closeScan(scan);
          for (const value of throughout.values()) expect(visited).toContain(value);
          for (const value of visited) expect(everPresent).toContain(value);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a scan visits an entry a delete shifts back behind it', () => {
    const homeOf = (key: number) => {
      const alone = new Int32Table<number>(2);
      alone.set(key, key);
      return alone.slotOf(key);
    };
    const target = homeOf(0);
    const sharing: number[] = [];
    for (let key = 0; sharing.length < 3; key++) if (homeOf(key) === target) sharing.push(key);
    const table = new Int32Table<number>(2);
    for (const key of sharing) table.set(key, key);
    const scan = table.openScan();
    const visited: number[] = [];
    // Up to the home slot: sharing[0] is visited, sharing[1] and [2] sit just after it.
    table.scanStep(scan, target + 1, (v) => visited.push(v));
    expect(visited).toEqual([sharing[0]]);
    table.delete(sharing[0]!);
    expect(table.slotOf(sharing[1]!)).toBe(target);
    while (!table.scanStep(scan, 1, (v) => visited.push(v)));
    expect(visited.sort()).toEqual([...sharing].sort());
  });

  it('forgets a closed scan: later deletes feed it nothing', () => {
    const table = new Int32Table<number>(2);
    for (let k = 0; k < 50; k++) table.set(k, k);
    const scan = table.openScan();
    table.scanStep(scan, 8, () => undefined);
    table.closeScan(scan);
    for (let k = 0; k < 50; k++) table.delete(k);
    expect(scan.moved).toEqual([]);
  });
});
