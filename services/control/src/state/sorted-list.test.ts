import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { SortedList } from './sorted-list.js';

const byNumber = (a: number, b: number) => a - b;

describe('SortedList against a sorted array', () => {
  it('adds, deletes, ranks and iterates as a sorted array of distinct items does', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), n: fc.integer({ min: 0, max: 60 }) }),
      fc.record({ kind: fc.constant('delete' as const), n: fc.integer({ min: 0, max: 60 }) }),
      fc.record({ kind: fc.constant('check' as const), n: fc.integer({ min: -1, max: 61 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 9 }), fc.array(op, { maxLength: 200 }), (chunk, ops) => {
        const list = new SortedList(byNumber, chunk);
        const plain: number[] = [];
        for (const { kind, n } of ops) {
          if (kind === 'add') {
            expect(list.add(n)).toBe(!plain.includes(n));
            if (!plain.includes(n)) plain.push(n);
            plain.sort(byNumber);
          } else if (kind === 'delete') {
            expect(list.delete(n)).toBe(plain.includes(n));
            if (plain.includes(n)) plain.splice(plain.indexOf(n), 1);
          } else {
            const below = plain.filter((x) => x < n).length;
            expect(list.rank((x) => x < n)).toBe(below);
            expect([...list.from((x) => x < n)]).toEqual(plain.slice(below));
            expect([...list.fromRank(Math.max(0, n))]).toEqual(plain.slice(Math.max(0, n)));
          }
          expect(list.size).toBe(plain.length);
        }
        expect([...list.fromRank(0)]).toEqual(plain);
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps its chunks at least a quarter full, whatever the order of deletes', () => {
    // Subjects made in order, expiring in that order, one in 33 renewed: a chunk per kept item before.
    const list = new SortedList(byNumber, 64);
    const queue: number[] = [];
    for (let n = 0; n < 200_000; n++) {
      list.add(n);
      if (n % 33 === 0) continue;
      queue.push(n);
      if (queue.length > 2000) list.delete(queue.shift()!);
    }
    expect(list.size).toBe(2000 + Math.ceil(200_000 / 33));
    expect(list.chunkCount).toBeLessThanOrEqual((4 * list.size) / 64 + 1);
    expect(list.rank((x) => x < 100_000)).toBe(Math.ceil(100_000 / 33));
  });
});
