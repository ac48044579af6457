import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AvroCursor, LONG_LIMIT, OFF_FAST_PATH } from './avro-cursor.js';

/** The contract's long, in BigInt: minimal, at most 10 bytes, within ±LONG_LIMIT; else the rule broken. */
function expectedLong(bytes: number[]): number | 'refused' {
  let n = 0n;
  for (let i = 0; i < bytes.length; i++) {
    if (i === 10) return 'refused';
    n |= BigInt(bytes[i]! & 0x7f) << BigInt(7 * i);
    if (bytes[i]! < 0x80) {
      if (i > 0 && bytes[i] === 0) return 'refused';
      const v = (n & 1n) === 0n ? n >> 1n : -((n + 1n) >> 1n);
      return v > BigInt(LONG_LIMIT) || v < -BigInt(LONG_LIMIT) ? 'refused' : Number(v);
    }
  }
  return 'refused'; // ran out
}

function cursorLong(bytes: number[]): number | 'refused' {
  const c = new AvroCursor(Buffer.from(bytes), 0);
  try {
    const v = c.long();
    return c.pos === bytes.length ? v : 'refused'; // the harness below gives one varint, nothing after
  } catch (error) {
    if (error !== OFF_FAST_PATH) throw error;
    return 'refused';
  }
}

/** A varint of 1 to 11 bytes: continuation bits on all but the last (on the last too, sometimes: it runs out). */
const varintBytes = fc
  .tuple(fc.array(fc.integer({ min: 0, max: 127 }), { minLength: 1, maxLength: 11 }), fc.boolean())
  .map(([groups, runsOut]) => groups.map((g, i) => (i < groups.length - 1 || runsOut ? g | 0x80 : g)));

describe('AvroCursor.long', () => {
  it('reads exactly what the contract says, BigInt-exact, for varints of 1 to 11 bytes', () => {
    fc.assert(
      fc.property(varintBytes, (bytes) => {
        expect(cursorLong(bytes)).toEqual(expectedLong(bytes));
      }),
      { numRuns: 5_000 },
    );
  });

  it('reads the edges of the range and refuses one past them', () => {
    const zigzag = (v: bigint) => (v >= 0n ? v << 1n : (-v << 1n) - 1n);
    const encode = (v: bigint) => {
      const out: number[] = [];
      let z = zigzag(v);
      while (z >= 0x80n) {
        out.push(Number(z & 0x7fn) | 0x80);
        z >>= 7n;
      }
      return [...out, Number(z)];
    };
    for (const v of [0n, -1n, 63n, -64n, 2n ** 48n, -(2n ** 48n), 2n ** 52n, -(2n ** 52n), 2n ** 52n + 1n, -(2n ** 52n) - 1n, BigInt(LONG_LIMIT), -BigInt(LONG_LIMIT)]) {
      expect(cursorLong(encode(v))).toBe(Number(v));
    }
    for (const v of [BigInt(LONG_LIMIT) + 1n, -BigInt(LONG_LIMIT) - 1n, 2n ** 63n - 1n, -(2n ** 63n)]) expect(cursorLong(encode(v))).toBe('refused');
  });

  it('names the rule a refused value broke', () => {
    const problem = (bytes: number[], read: (c: AvroCursor) => unknown) => {
      const c = new AvroCursor(Buffer.from(bytes), 0);
      expect(() => read(c)).toThrow(OFF_FAST_PATH);
      return c.problem;
    };
    expect(problem([0x80, 0x00], (c) => c.long())).toBe('a long is not minimally encoded');
    expect(problem([0x80, 0x80, 0x80, 0x80, 0x10], (c) => c.int())).toBe('an int is out of range');
    expect(problem([0x02], (c) => c.boolean())).toBe('a boolean byte is neither 0 nor 1');
    expect(problem([0x01], (c) => c.string())).toBe('a length is negative');
    expect(problem([0x08, 0x61], (c) => c.string())).toBe('a length runs past the end');
    expect(problem([0x04], (c) => c.branch(2))).toBe('index 2 is not below 2');
    expect(problem([0x01, 0x03], (c) => c.block())).toBe('a block size is negative');
    expect(problem([0x14, 0x00], (c) => c.block())).toBe('a block of 10 items is longer than the bytes left');
    const sized = new AvroCursor(Buffer.from([0x01, 0x06, 0x02, 0x61, 0x02, 0x62]), 0);
    expect(sized.block()).toBe(1);
    const end = sized.blockEnd;
    sized.string();
    sized.string();
    expect(() => sized.endBlock(end)).toThrow(OFF_FAST_PATH);
    expect(sized.problem).toBe("a block's items end 1 byte(s) after the end its size gives");
  });
});
