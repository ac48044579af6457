import { BanstreamError } from '@banstream/core';

/**
 * Schema fingerprints as the Avro specification defines them ("Parsing Canonical
 * Form for Schemas" and "Schema Fingerprints"): CRC-64-AVRO (Rabin) over the UTF-8
 * bytes of the Parsing Canonical Form. The single-object header carries this value,
 * so it must match what Java, Python or Rust writers compute, bit for bit.
 *
 * The canonical form is computed here from the schema JSON rather than taken from
 * avsc's `type.schema()`: avsc agrees on every schema it accepts, but refuses some of
 * the specification's own test inputs (an empty union, an ill-typed default), and a
 * fingerprint should not depend on a library's validation choices.
 */

/** CRC-64-AVRO of the empty input, and the polynomial of the table below. */
export const CRC64_AVRO_EMPTY = 0xc15d213aa4d7a795n;

const TABLE: BigUint64Array = buildTable();

function buildTable(): BigUint64Array {
  const table = new BigUint64Array(256);
  for (let i = 0; i < 256; i++) {
    let fp = BigInt(i);
    for (let j = 0; j < 8; j++) fp = (fp >> 1n) ^ (CRC64_AVRO_EMPTY & -(fp & 1n));
    table[i] = fp;
  }
  return table;
}

/** CRC-64-AVRO of raw bytes, or of a string's UTF-8 bytes; an unsigned 64-bit bigint. */
export function crc64Avro(input: Uint8Array | string): bigint {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  let fp = CRC64_AVRO_EMPTY;
  for (const byte of bytes) {
    // The index is always 0..255, so the table lookup cannot miss.
    fp = (fp >> 8n) ^ TABLE[Number((fp ^ BigInt(byte)) & 0xffn)]!;
  }
  return fp;
}

/** Fingerprint of a schema (parsed JSON): CRC-64-AVRO of its Parsing Canonical Form. */
export function schemaFingerprint(schema: unknown): bigint {
  return crc64Avro(parsingCanonicalForm(schema));
}

/** The fingerprint as a Java `long` would print it; the specification's test vectors use this. */
export function toSignedLong(fingerprint: bigint): bigint {
  return BigInt.asIntN(64, fingerprint);
}

/** 16 lower-case hex digits of the 64-bit value (numeric order, not wire byte order), for logs. */
export function fingerprintToHex(fingerprint: bigint): string {
  return BigInt.asUintN(64, fingerprint).toString(16).padStart(16, '0');
}

const PRIMITIVES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string']);

/**
 * Parsing Canonical Form of a schema given as parsed JSON. Applies the spec's
 * transformations: [PRIMITIVES] simple form, [FULLNAMES] names qualified and
 * `namespace` removed, [STRIP] only name/type/fields/symbols/items/values/size kept
 * (so doc, aliases, default, order and logicalType go), [ORDER] that key order,
 * [STRINGS]/[INTEGERS]/[WHITESPACE] by serialising with JSON.stringify.
 */
export function parsingCanonicalForm(schema: unknown): string {
  return canonical(schema, '', new Set());
}

function canonical(schema: unknown, namespace: string, defined: Set<string>): string {
  if (typeof schema === 'string') {
    return JSON.stringify(PRIMITIVES.has(schema) ? schema : fullName(schema, namespace));
  }
  if (Array.isArray(schema)) {
    return `[${schema.map((branch) => canonical(branch, namespace, defined)).join(',')}]`;
  }
  if (schema === null || typeof schema !== 'object') invalid('a schema must be a string, an array or an object');
  const s = schema as Record<string, unknown>;
  const type = s['type'];
  if (typeof type !== 'string') return canonical(type, namespace, defined);
  switch (type) {
    case 'array':
      return `{"type":"array","items":${canonical(s['items'], namespace, defined)}}`;
    case 'map':
      return `{"type":"map","values":${canonical(s['values'], namespace, defined)}}`;
    case 'record':
    case 'error':
    case 'enum':
    case 'fixed':
      return named(s, type, namespace, defined);
    default:
      // A primitive (its logicalType dropped) or a reference to a named type.
      return canonical(type, namespace, defined);
  }
}

function named(s: Record<string, unknown>, type: string, namespace: string, defined: Set<string>): string {
  if (typeof s['name'] !== 'string') invalid(`a ${type} needs a name`);
  const ns = typeof s['namespace'] === 'string' ? s['namespace'] : namespace;
  const name = fullName(s['name'], ns);
  // A name is written out in full once; later occurrences are references.
  if (defined.has(name)) return JSON.stringify(name);
  defined.add(name);
  const head = `{"name":${JSON.stringify(name)}`;
  if (type === 'enum') {
    return `${head},"type":"enum","symbols":${JSON.stringify(s['symbols'] ?? [])}}`;
  }
  if (type === 'fixed') {
    const size = Number(s['size']);
    if (!Number.isInteger(size) || size < 0) invalid(`fixed ${name} needs an integer size`);
    return `${head},"type":"fixed","size":${size}}`;
  }
  const fields = s['fields'];
  if (!Array.isArray(fields)) invalid(`record ${name} needs a fields array`);
  const inner = namespaceOf(name);
  const parts = fields.map((field: unknown) => {
    const f = (field ?? {}) as Record<string, unknown>;
    if (typeof f['name'] !== 'string') invalid(`a field of ${name} has no name`);
    return `{"name":${JSON.stringify(f['name'])},"type":${canonical(f['type'], inner, defined)}}`;
  });
  // Java writes errors as records too: the wire format is the same.
  return `${head},"type":"record","fields":[${parts.join(',')}]}`;
}

function fullName(name: string, namespace: string): string {
  return name.includes('.') || namespace === '' ? name : `${namespace}.${name}`;
}

function namespaceOf(fullname: string): string {
  const dot = fullname.lastIndexOf('.');
  return dot < 0 ? '' : fullname.slice(0, dot);
}

function invalid(message: string): never {
  throw new BanstreamError('CONFIG_INVALID', `invalid Avro schema: ${message}`);
}
