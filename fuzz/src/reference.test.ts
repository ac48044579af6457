import fc from 'fast-check';
import { loadSchemaCatalog, requestEvent } from '@banstream/schemas';
import { describe, expect, it } from 'vitest';
import { valueOf } from './arbitraries.js';
import { difference } from './equal.js';
import { Rng } from './random.js';
import { decodeBody, Input, parseSchema, Refused } from './reference.js';
import { encodeTraced } from './writer.js';
import { mutate } from './mutate.js';

const bytes = (...b: number[]) => Uint8Array.from(b);
const read = (schema: unknown, ...b: number[]) => decodeBody(parseSchema(schema), bytes(...b), 0);
const rule = (schema: unknown, ...b: number[]) => {
  try {
    read(schema, ...b);
    return 'accepted';
  } catch (error) {
    return error instanceof Refused ? error.rule : `raw: ${String(error)}`;
  }
};

/** A value as its bytes say it: lone surrogates (in keys too) become U+FFFD in UTF-8. */
function asWritten(value: unknown): unknown {
  if (typeof value === 'string') return Buffer.from(value, 'utf8').toString('utf8');
  if (Array.isArray(value)) return value.map(asWritten);
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value;
  const out = Object.create(null) as Record<string, unknown>;
  for (const k of Object.keys(value)) out[asWritten(k) as string] = asWritten((value as Record<string, unknown>)[k]);
  return out;
}

describe('the reference decoder', () => {
  it("reads the Avro specification's examples", () => {
    // "Binary Encoding": zigzag varints, a string, an array of two longs in one block.
    expect([0x00, 0x01, 0x02, 0x03, 0x7f].map((b) => read('long', b))).toEqual([0, -1, 1, -2, -64]);
    expect(read('long', 0x80, 0x01)).toBe(64);
    expect(read('string', 0x06, 0x66, 0x6f, 0x6f)).toBe('foo');
    expect(read({ type: 'array', items: 'long' }, 0x04, 0x06, 0x36, 0x00)).toEqual([3, 27]);
    expect(read(['null', 'string'], 0x02, 0x02, 0x61)).toBe('a');
    // A block with a negative count is followed by its size in bytes.
    expect(read({ type: 'array', items: 'long' }, 0x03, 0x04, 0x06, 0x36, 0x00)).toEqual([3, 27]);
  });

  it('refuses what the contract refuses, naming the rule', () => {
    expect(rule('long', 0x80, 0x00)).toBe('varint not minimal');
    expect(rule('long', ...Array(10).fill(0x80), 0x01)).toBe('varint longer than 10 bytes');
    expect(rule('long', 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20)).toBe('long out of range'); // 2^53
    expect(rule('int', 0x80, 0x80, 0x80, 0x80, 0x10)).toBe('int out of range'); // 2^31
    expect(rule('boolean', 0x02)).toBe('boolean neither 0 nor 1');
    expect(rule('string', 0x01)).toBe('negative length');
    expect(rule('string', 0x08, 0x61)).toBe('runs past the end');
    expect(rule(['null', 'string'], 0x04)).toBe('index out of range');
    expect(rule({ type: 'map', values: 'string' }, 0x01, 0x03, 0x02, 0x61, 0x02, 0x62, 0x00)).toBe('negative block size'); // size -2
    expect(rule({ type: 'map', values: 'string' }, 0x01, 0x06, 0x02, 0x61, 0x02, 0x62, 0x00)).toBe('block size differs from its items'); // 3, not 4
    expect(read({ type: 'map', values: 'string' }, 0x01, 0x08, 0x02, 0x61, 0x02, 0x62, 0x00)).toEqual({ a: 'b' });
    expect(rule('long', 0x02, 0x00)).toBe('trailing bytes');
  });

  it('keeps a later map key over an earlier one, and any key, __proto__ included', () => {
    const map = read({ type: 'map', values: 'string' }, 0x04, 0x12, ...Buffer.from('__proto__'), 0x02, 0x61, 0x12, ...Buffer.from('__proto__'), 0x02, 0x62, 0x00) as Record<string, string>;
    expect(Object.keys(map)).toEqual(['__proto__']);
    expect(map['__proto__']).toBe('b');
  });

  it('reads back what the harness writes, in every layout, for every schema of the catalog, with its spots where they are said to be', () => {
    const catalog = loadSchemaCatalog();
    for (const name of catalog.names) {
      for (const version of catalog.versions(name)) {
        const node = parseSchema(version.schema);
        fc.assert(
          fc.property(valueOf(node), fc.nat(), fc.boolean(), (value, seed, canonical) => {
            const { bytes: encoded, spots } = encodeTraced(node, value, new Rng(seed), canonical);
            const back = decodeBody(node, encoded, 0);
            expect(difference(back, asWritten(value))).toBe('');
            // Every spot is a varint holding the number noted (booleans and doubles: their bytes).
            for (const s of spots) {
              if (s.kind === 'double' || s.kind === 'boolean') continue;
              const at = new Input(encoded, s.at);
              expect(at.long()).toBe(s.value);
              expect(at.pos).toBe(s.end);
            }
          }),
          { numRuns: 30 },
        );
      }
    }
  });
});

describe('mutations', () => {
  it('are the same for the same seed, and an exact size keeps a record valid', () => {
    const catalog = loadSchemaCatalog();
    const node = parseSchema(catalog.latest('request-event-batch').schema);
    const value = { events: [requestEvent({ headers: { a: 'b' } })] };
    const { bytes: body, spots } = encodeTraced(node, value, new Rng(1), true);
    const record = Buffer.concat([Buffer.alloc(10), body]);
    const at = spots.map((s) => ({ ...s, at: s.at + 10, end: s.end + 10 }));
    const once = mutate(record, at, new Rng(5), 3, []);
    expect(mutate(record, at, new Rng(5), 3, [])).toEqual(once);
    // Rewriting a block with a negative count and its exact size: still the same value.
    const headers = at.find((s) => s.kind === 'count' && s.value === 1 && s.blockBytes === 4)!;
    const sized = Buffer.concat([record.subarray(0, headers.at), Buffer.of(0x01, 0x08), record.subarray(headers.end)]);
    expect(difference(decodeBody(node, sized, 10), decodeBody(node, record, 10))).toBe('');
  });
});
