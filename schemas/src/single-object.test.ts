import { isBanstreamError } from '@banstream/core';
import { describe, expect, it } from 'vitest';
import { toAvroType } from './avro-type.js';
import { schemaFingerprint } from './fingerprint.js';
import { assertValid, decodeSingleObjectBody, encodeSingleObject, readFingerprint } from './single-object.js';

const schema = {
  type: 'record',
  name: 'Sample',
  namespace: 'test',
  fields: [
    { name: 'id', type: 'string' },
    { name: 'n', type: 'int' },
    { name: 'color', type: { type: 'enum', name: 'Color', symbols: ['red', 'green'] } },
    { name: 'items', type: { type: 'array', items: { type: 'record', name: 'Item', fields: [{ name: 'ip', type: 'string' }] } } },
  ],
};
const type = toAvroType(schema);
const fp = schemaFingerprint(schema);
const value = { id: 'abc', n: 7, color: 'green', items: [{ ip: '192.0.2.1' }] };

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return isBanstreamError(err) ? err.code : `raw: ${String(err)}`;
  }
  return 'no error';
}

describe('single-object encoding', () => {
  it('writes C3 01, the fingerprint little-endian, then the Avro body', () => {
    const buf = encodeSingleObject(type, fp, value, 'sample');
    expect([...buf.subarray(0, 2)]).toEqual([0xc3, 0x01]);
    expect(buf.readBigUInt64LE(2)).toBe(fp);
    expect(buf.subarray(10)).toEqual(type.toBuffer(value));
    expect(readFingerprint(buf)).toBe(fp);
    expect(decodeSingleObjectBody(type, buf, fp, 'sample')).toEqual(value);
  });

  it('accepts a Uint8Array that is not a Buffer', () => {
    const buf = encodeSingleObject(type, fp, value, 'sample');
    const plain = new Uint8Array(buf.length + 3).subarray(3);
    plain.set(buf);
    expect(readFingerprint(plain)).toBe(fp);
    expect(decodeSingleObjectBody(type, plain, fp, 'sample')).toEqual(value);
  });

  it('refuses wrong magic with SCHEMA_BAD_MAGIC, even when short', () => {
    expect(codeOf(() => readFingerprint(Buffer.from('{"id":"abc"}')))).toBe('SCHEMA_BAD_MAGIC');
    expect(codeOf(() => readFingerprint(Buffer.from([0xc3, 0x02, 0, 0, 0, 0, 0, 0, 0, 0])))).toBe('SCHEMA_BAD_MAGIC');
    expect(codeOf(() => readFingerprint(Buffer.from([0x00])))).toBe('SCHEMA_BAD_MAGIC');
  });

  it('refuses a header shorter than 10 bytes with SCHEMA_TRUNCATED', () => {
    const buf = encodeSingleObject(type, fp, value, 'sample');
    for (const length of [0, 1, 2, 9]) {
      expect(
        codeOf(() => readFingerprint(buf.subarray(0, length))),
        `length ${length}`,
      ).toBe('SCHEMA_TRUNCATED');
    }
  });

  it('refuses a truncated body, trailing bytes and corrupt bodies with SCHEMA_TRUNCATED', () => {
    const buf = encodeSingleObject(type, fp, value, 'sample');
    for (let length = 10; length < buf.length; length++) {
      const cut = buf.subarray(0, length);
      expect(
        codeOf(() => decodeSingleObjectBody(type, cut, fp, 'sample')),
        `length ${length}`,
      ).toBe('SCHEMA_TRUNCATED');
    }
    const trailing = Buffer.concat([buf, Buffer.from([0])]);
    expect(codeOf(() => decodeSingleObjectBody(type, trailing, fp, 'sample'))).toBe('SCHEMA_TRUNCATED');
    // id "abc" is 1 + 3 bytes, n is 1 byte: the enum index sits at offset 15.
    const badEnum = Buffer.from(buf);
    badEnum[15] = 0x08;
    expect(codeOf(() => decodeSingleObjectBody(type, badEnum, fp, 'sample'))).toBe('SCHEMA_TRUNCATED');
  });

  it('names every invalid field path and no values', () => {
    const bad = { id: 'secret-token', n: 1.5, color: 'blue', items: [{ ip: '192.0.2.1' }, { ip: 4 }] };
    try {
      encodeSingleObject(type, fp, bad, 'sample');
      expect.unreachable();
    } catch (err) {
      expect(isBanstreamError(err, 'SCHEMA_INVALID_VALUE')).toBe(true);
      const e = err as Error & { details: { problems: string[] } };
      expect(e.details.problems).toEqual(['n: expected int', 'color: expected test.Color', 'items.1.ip: expected string']);
      expect(e.message).not.toContain('blue');
    }
  });

  it('refuses undeclared fields and non-objects', () => {
    expect(() => assertValid(type, { ...value, extra: true }, 'sample')).toThrow(/\(root\): undeclared field\(s\) extra/);
    expect(() => assertValid(type, { ...value, items: [{ ip: 'x', port: 1 }] }, 'sample')).toThrow(/items\.0: undeclared field\(s\) port/);
    expect(codeOf(() => encodeSingleObject(type, fp, null, 'sample'))).toBe('SCHEMA_INVALID_VALUE');
    expect(codeOf(() => encodeSingleObject(type, fp, 'text', 'sample'))).toBe('SCHEMA_INVALID_VALUE');
  });
});

describe('encodeSingleObject sizes', () => {
  it('writes exactly the body avsc writes, for values from a few bytes to past its buffers (1 KiB, 64 KiB, 1 MiB)', () => {
    // Approximate encoded sizes in bytes: items of about 1 KiB each beyond the first few.
    const sizes = [0, 12, 1_200, 60_000, 70_000, 300_000, 1_100_000, 40, 1_100_000];
    for (const n of sizes) {
      const long = n > 1_000;
      const v = { ...value, items: Array.from({ length: long ? Math.ceil(n / 1_002) : Math.ceil(n / 12) }, (_, i) => ({ ip: long ? String(i).padEnd(1_000, 'x') : `10.0.${i % 256}.1` })) };
      const encoded = encodeSingleObject(type, fp, v, 'sample');
      expect(encoded.length, `${n} items`).toBe(10 + type.toBuffer(v).length);
      expect(encoded.subarray(10).equals(type.toBuffer(v)), `${n} items`).toBe(true);
      expect(decodeSingleObjectBody(type, encoded, fp, 'sample')).toEqual(v);
    }
  });
});
