import { isBanstreamError } from '@banstream/core';
import { describe, expect, it } from 'vitest';
import { toAvroType } from './avro-type.js';
import { schemaFingerprint } from './fingerprint.js';
import { decodeSingleObjectBody, encodeSingleObject } from './single-object.js';

const schema = {
  type: 'record',
  name: 'Holder',
  fields: [
    { name: 'list', type: { type: 'array', items: { type: 'record', name: 'Item', fields: [{ name: 's', type: 'string' }] } } },
    { name: 'tags', type: { type: 'map', values: 'string' } },
  ],
};
// The same record without `list`: reading Holder data with it skips the array.
const slim = { ...schema, fields: [schema.fields[1]] };
// ...and without `tags`: reading with it skips the map.
const listOnly = { ...schema, fields: [schema.fields[0]] };
const type = toAvroType(schema);
const slimType = toAvroType(slim);
const listOnlyType = toAvroType(listOnly);
const fp = schemaFingerprint(schema);

/** Avro zig-zag varint. */
function long(n: number): number[] {
  let z = BigInt(n) >= 0n ? BigInt(n) * 2n : -BigInt(n) * 2n - 1n;
  const out: number[] = [];
  while (z >= 0x80n) {
    out.push(Number(z & 0x7fn) | 0x80);
    z >>= 7n;
  }
  return [...out, Number(z)];
}
const str = (s: string): number[] => [...long(Buffer.byteLength(s)), ...Buffer.from(s)];
const message = (body: number[]): Buffer => {
  const header = encodeSingleObject(type, fp, { list: [], tags: {} }, 'holder').subarray(0, 10);
  return Buffer.concat([header, Buffer.from(body)]);
};

function decodeCode(buf: Buffer, reader = type): string {
  const resolver = reader === type ? undefined : reader.createResolver(type);
  try {
    decodeSingleObjectBody(reader, buf, fp, 'holder', resolver);
    return 'decoded';
  } catch (err) {
    return isBanstreamError(err) ? err.code : `raw: ${String(err)}`;
  }
}

describe('block-count guard', () => {
  it.each([1e7, 1e9, 2 ** 40])('refuses an array claiming %d items, quickly', (count) => {
    const started = performance.now();
    expect(decodeCode(message(long(count)))).toBe('SCHEMA_TRUNCATED');
    expect(decodeCode(message(long(count)), slimType)).toBe('SCHEMA_TRUNCATED'); // the skip path
    expect(decodeCode(message([...long(-count), ...long(3)]))).toBe('SCHEMA_TRUNCATED');
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('refuses a map claiming 10^9 entries, quickly', () => {
    const started = performance.now();
    expect(decodeCode(message([0, ...long(1e9), ...str('k')]))).toBe('SCHEMA_TRUNCATED');
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('still reads arrays and maps written in several blocks, with and without sizes', () => {
    const item = (s: string): number[] => str(s);
    const sized = [...item('c')];
    const body = [
      ...long(2),
      ...item('a'),
      ...item('b'),
      ...long(-1),
      ...long(sized.length),
      ...sized,
      0,
      ...long(1),
      ...str('k1'),
      ...str('v1'),
      ...long(-1),
      ...long(str('k2').length + str('v2').length),
      ...str('k2'),
      ...str('v2'),
      0,
    ];
    const buf = message(body);
    const value = decodeSingleObjectBody(type, buf, fp, 'holder');
    expect(value).toEqual({ list: [{ s: 'a' }, { s: 'b' }, { s: 'c' }], tags: { k1: 'v1', k2: 'v2' } });
    const slimValue = decodeSingleObjectBody(slimType, buf, fp, 'holder', slimType.createResolver(type));
    expect(slimValue).toEqual({ tags: { k1: 'v1', k2: 'v2' } });
  });

  it('skips arrays and maps written with sizes by the size alone, however many bytes it takes', () => {
    // Sizes past 63 take two varint bytes: a skip that lost count of the size's own bytes would land in the middle.
    for (const text of ['c', 'x'.repeat(100)]) {
      const items = [...str(text), ...str(text)];
      const entries = [...str('k1'), ...str(text), ...str('k2'), ...str('v2')];
      const body = [...long(-2), ...long(items.length), ...items, 0, ...long(-2), ...long(entries.length), ...entries, 0];
      const buf = message(body);
      expect(decodeSingleObjectBody(slimType, buf, fp, 'holder', slimType.createResolver(type))).toEqual({ tags: { k1: text, k2: 'v2' } });
      expect(decodeSingleObjectBody(listOnlyType, buf, fp, 'holder', listOnlyType.createResolver(type))).toEqual({ list: [{ s: text }, { s: text }] });
    }
  });
});

describe('types built by the catalog', () => {
  it('refuse an array whose items can take no bytes: its count could not be bounded by the bytes', () => {
    const arrayOf = (items: unknown) => () => toAvroType({ type: 'record', name: 'R', fields: [{ name: 'xs', type: { type: 'array', items } }] }, 'test');
    expect(arrayOf('null')).toThrow(/CONFIG_INVALID|an array of null items, which can take no bytes/);
    expect(arrayOf({ type: 'record', name: 'Empty', fields: [] })).toThrow(/which can take no bytes/);
    expect(arrayOf(['null', 'string'])).not.toThrow(); // a union takes its branch index
  });

  it('decode through the contract from their public decode() and fromBuffer() too', () => {
    const sized = Buffer.from([0x00, ...long(-1), ...long(-2), ...str('k'), ...str('v'), 0x00]); // tags: a block of -1 entry, size -2
    expect(() => type.fromBuffer(sized)).toThrow(/a block size is negative/);
    expect(() => type.decode(sized, 0)).toThrow(/a block size is negative/);
    expect(type.decode(Buffer.from([0x02, ...str('k')]), 0).offset).toBe(-1); // cut short: avsc's answer
    expect(type.fromBuffer(Buffer.from([0x00, ...long(1), ...str('__proto__'), ...str('v'), 0x00]))).toEqual({ list: [], tags: { ['__proto__']: 'v' } });
  });
});
