import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Int32Table } from './int32-table.js';

describe('Int32Table', () => {
  it('behaves like a Map under any sequence of sets and deletes (keys crowded into few slots)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.oneof(fc.integer({ min: -8, max: 8 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })), fc.nat()), { maxLength: 400 }),
        (ops) => {
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
        },
      ),
      { numRuns: 300 },
    );
  });

  it('deletes the entries a predicate picks and keeps finding the others', () => {
    const table = new Int32Table<number>();
    for (let k = 0; k < 5000; k++) table.set(k * 7919, k);
    expect(table.deleteWhere((v) => v % 3 === 0)).toBe(1667);
    expect(table.size).toBe(3333);
    for (let k = 0; k < 5000; k++) expect(table.get(k * 7919)).toBe(k % 3 === 0 ? undefined : k);
  });
});
