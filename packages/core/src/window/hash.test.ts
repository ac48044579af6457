import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { continuedFingerprintInto, keyFingerprintInto, prefixHash } from './hash.js';

const text = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)), maxLength: 3 }),
);

describe('continuedFingerprintInto', () => {
  it('gives the fingerprint of prefix + rest, for any split, either length parity and any seeds', () => {
    const whole = new Uint32Array(2);
    const continued = new Uint32Array(2);
    fc.assert(
      fc.property(text, text, fc.nat(), fc.nat(), (prefix, rest, seedA, seedB) => {
        keyFingerprintInto(prefix + rest, seedA, seedB, whole);
        continuedFingerprintInto(prefixHash(prefix, seedA, seedB), rest, continued);
        expect([...continued]).toEqual([...whole]);
      }),
      { numRuns: 2000 },
    );
  });

  it('tells apart keys that differ only in where the prefix ends', () => {
    const a = new Uint32Array(2);
    const b = new Uint32Array(2);
    continuedFingerprintInto(prefixHash('ab|', 1, 2), 'c', a);
    continuedFingerprintInto(prefixHash('ab|c', 1, 2), '', b);
    expect([...a]).toEqual([...b]); // the same key, split differently
    continuedFingerprintInto(prefixHash('ab|', 1, 2), 'cd', b);
    expect([...a]).not.toEqual([...b]);
  });
});
