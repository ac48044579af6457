import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseJsonArrayInChunks } from './json-array.js';

const parse = (text: string, chunkBytes = 8) => parseJsonArrayInChunks(Buffer.from(text, 'utf8'), chunkBytes);

describe('parseJsonArrayInChunks', () => {
  it('gives what JSON.parse gives for any array, whatever the chunk size', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue()), fc.integer({ min: 1, max: 64 }), fc.boolean(), (values, chunkBytes, spaced) => {
        const text = spaced ? JSON.stringify(values, null, 2) : JSON.stringify(values);
        expect(parse(text, chunkBytes)).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps quotes, brackets and commas inside strings, escaped or not, and non-ASCII text', () => {
    const values = [{ a: 'x,y]"}' }, 'back\\\\', 'q\\"', '[{', 'Zürich 東京 🙂', [1, [2, { b: ',' }]]];
    const text = JSON.stringify(values);
    for (const size of [1, 3, 7, 100]) expect(parse(text, size)).toEqual(values);
  });

  it("refuses what is not one well-formed array, so the caller reports JSON.parse's error", () => {
    for (const bad of ['[1,2', '[1,]', '[1,2,]', '[,1]', '[1 2]', '[1]]', '[1] x', '["open]', '[{]', '', '  ']) {
      expect(parse(bad, 1), bad).toBeUndefined();
      expect(() => JSON.parse(bad), bad).toThrow();
    }
    // JSON, but not an array: the caller says an array is wanted.
    for (const other of ['{"a":[1,2]}', 'null', '"[1]"', '7']) expect(parse(other, 1), other).toBeUndefined();
  });

  it('reads empty arrays and surrounding white space', () => {
    expect(parse('[]')).toEqual([]);
    expect(parse(' \n[ ] \n')).toEqual([]);
    expect(parse('\t[ 1 ,\n 2 ]\r\n', 1)).toEqual([1, 2]);
  });
});
