import { readFileSync } from 'node:fs';
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { CRC64_AVRO_EMPTY, crc64Avro, fingerprintToHex, parsingCanonicalForm, schemaFingerprint, toSignedLong } from './fingerprint.js';

interface Vector {
  id: string;
  input: string;
  canonical: string;
  fingerprint?: string;
}

// Copied from apache/avro share/test/data/schema-tests.txt; see the file's _source.
const fixture = JSON.parse(readFileSync(new URL('./fixtures/avro-fingerprint-vectors.json', import.meta.url), 'utf8')) as { vectors: Vector[] };

/** The specification's bit-by-bit definition, without the table, as an independent oracle. */
function slowCrc64(bytes: Uint8Array): bigint {
  let fp = CRC64_AVRO_EMPTY;
  for (const byte of bytes) {
    fp ^= BigInt(byte);
    for (let i = 0; i < 8; i++) fp = (fp >> 1n) ^ (CRC64_AVRO_EMPTY & -(fp & 1n));
  }
  return fp;
}

describe('Parsing Canonical Form and CRC-64-AVRO: the specification vectors', () => {
  it('has the whole file', () => {
    expect(fixture.vectors).toHaveLength(34);
    expect(fixture.vectors.filter((v) => v.fingerprint !== undefined)).toHaveLength(26);
  });

  it.each(fixture.vectors)('vector $id: canonical form', (vector) => {
    expect(parsingCanonicalForm(JSON.parse(vector.input))).toBe(vector.canonical);
  });

  it.each(fixture.vectors.filter((v) => v.fingerprint !== undefined))('vector $id: fingerprint', (vector) => {
    const fp = schemaFingerprint(JSON.parse(vector.input));
    expect(toSignedLong(fp)).toBe(BigInt(vector.fingerprint!));
    expect(toSignedLong(crc64Avro(vector.canonical))).toBe(BigInt(vector.fingerprint!));
  });

  it('agrees with avsc on every vector avsc accepts', () => {
    const refusedByAvsc: string[] = [];
    for (const vector of fixture.vectors) {
      let avscForm: string;
      try {
        avscForm = JSON.stringify(avro.Type.forSchema(JSON.parse(vector.input)).schema());
      } catch {
        refusedByAvsc.push(vector.id);
        continue;
      }
      expect(avscForm, vector.id).toBe(vector.canonical);
    }
    // An empty union and a boolean field with the default "true": valid PCF inputs, refused by avsc.
    expect(refusedByAvsc).toEqual(['016', '026']);
  });
});

describe('crc64Avro', () => {
  it('is EMPTY for empty input', () => {
    expect(crc64Avro(new Uint8Array())).toBe(0xc15d213aa4d7a795n);
  });

  it('matches the bit-by-bit definition', () => {
    for (const text of ['a', 'banstream', '{"name":"x","type":"record","fields":[]}', 'ümlaut ✓']) {
      expect(crc64Avro(text)).toBe(slowCrc64(Buffer.from(text, 'utf8')));
    }
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(crc64Avro(bytes)).toBe(slowCrc64(bytes));
  });

  it('renders hex and signed forms', () => {
    const fp = schemaFingerprint('string');
    expect(toSignedLong(fp)).toBe(-8142146995180207161n);
    expect(fingerprintToHex(fp)).toMatch(/^[0-9a-f]{16}$/);
    expect(BigInt(`0x${fingerprintToHex(fp)}`)).toBe(fp);
    expect(fingerprintToHex(1n)).toBe('0000000000000001');
  });
});

describe('parsingCanonicalForm beyond the vectors', () => {
  it('qualifies nested names and references with the enclosing namespace', () => {
    const schema = {
      type: 'record',
      name: 'Outer',
      namespace: 'a.b',
      doc: 'dropped',
      fields: [
        { name: 'e', type: { type: 'enum', name: 'E', symbols: ['X'], default: 'X' }, default: 'X' },
        { name: 'again', type: 'E' },
        { name: 'other', type: { type: 'fixed', name: 'c.F', size: '4' } },
        { name: 'at', type: { type: 'long', logicalType: 'timestamp-millis' } },
        { name: 'tags', type: { type: 'map', values: { type: 'array', items: 'string' } }, default: {} },
      ],
    };
    expect(parsingCanonicalForm(schema)).toBe(
      '{"name":"a.b.Outer","type":"record","fields":[' +
        '{"name":"e","type":{"name":"a.b.E","type":"enum","symbols":["X"]}},' +
        '{"name":"again","type":"a.b.E"},' +
        '{"name":"other","type":{"name":"c.F","type":"fixed","size":4}},' +
        '{"name":"at","type":"long"},' +
        '{"name":"tags","type":{"type":"map","values":{"type":"array","items":"string"}}}]}',
    );
  });

  it('rejects what is not a schema', () => {
    expect(() => parsingCanonicalForm(42)).toThrow(/invalid Avro schema/);
    expect(() => parsingCanonicalForm({ type: 'record', fields: [] })).toThrow(/needs a name/);
  });
});
