import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isBanstreamError, type BanstreamError } from '@banstream/core';
import { afterAll, describe, expect, it } from 'vitest';
import { buildSchemaCatalog, type SchemaSource } from './catalog.js';
import { loadSchemaCatalog } from './catalog-files.js';
import { fingerprintToHex } from './fingerprint.js';
import { encodeSingleObject } from './single-object.js';
import { SCHEMA_NAMES } from './types.js';

// Test-only versions of a test-only record: schemas/avro keeps real history only.
const widgetV1 = {
  type: 'record',
  name: 'Widget',
  namespace: 'test.v1',
  fields: [
    { name: 'id', type: 'string' },
    { name: 'count', type: 'int' },
  ],
};
const widgetV2 = {
  ...widgetV1,
  fields: [
    ...widgetV1.fields,
    { name: 'label', type: 'string', default: 'none' },
    { name: 'owner', type: ['null', 'string'], default: null },
    { name: 'tags', type: { type: 'map', values: 'string' }, default: {} },
  ],
};
const gadgetV1 = { type: 'record', name: 'Gadget', namespace: 'test.v1', fields: [{ name: 'id', type: 'string' }] };

interface Widget {
  id: string;
  count: number;
  label: string;
  owner: string | null;
  tags: Record<string, string>;
}

const dirs: string[] = [];
function schemaDir(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'banstream-schemas-'));
  dirs.push(dir);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return dir;
}
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function caught(fn: () => unknown): BanstreamError {
  try {
    fn();
  } catch (err) {
    if (isBanstreamError(err)) return err;
    throw new Error(`expected a BanstreamError, got ${String(err)}`);
  }
  throw new Error('expected an error');
}

const catalog = loadSchemaCatalog(schemaDir({ 'widget/v1.avsc': widgetV1, 'widget/v2.avsc': widgetV2, 'gadget/v1.avsc': gadgetV1, 'widget/README.md': 'notes' }));

describe('SchemaCatalog', () => {
  it('loads every version, oldest first, keyed by name and fingerprint', () => {
    expect(catalog.names).toEqual(['gadget', 'widget']);
    const [v1, v2] = catalog.versions('widget');
    expect([v1?.version, v2?.version]).toEqual([1, 2]);
    expect(catalog.latest('widget')).toBe(v2);
    expect(catalog.byFingerprint(v1!.fingerprint)).toBe(v1);
    expect(catalog.codec('widget')).toBe(catalog.codec('widget'));
  });

  it('encodes with the newest version', () => {
    const codec = catalog.codec<Widget>('widget');
    const buf = codec.encode({ id: 'w1', count: 3, label: 'blue', owner: 'ops', tags: { a: 'b' } });
    expect(codec.version).toBe(2);
    expect(buf.readBigUInt64LE(2)).toBe(catalog.latest('widget').fingerprint);
    expect(catalog.identify(buf).version).toBe(2);
    expect(codec.decode(buf)).toEqual({ id: 'w1', count: 3, label: 'blue', owner: 'ops', tags: { a: 'b' } });
  });

  it('decodes an old writer into the new reader shape, defaults filled in', () => {
    const v1 = catalog.versions('widget')[0]!;
    const old = encodeSingleObject(v1.type, v1.fingerprint, { id: 'w0', count: 9 }, 'widget');
    const decoded = catalog.codec<Widget>('widget').decode(old);
    expect(decoded).toEqual({ id: 'w0', count: 9, label: 'none', owner: null, tags: {} });
    // Twice: the second decode goes through the cached resolver.
    expect(catalog.codec<Widget>('widget').decode(old)).toEqual(decoded);
  });

  it('refuses an unknown fingerprint, carrying it in details', () => {
    const buf = Buffer.from([0xc3, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0]);
    const err = caught(() => catalog.codec('widget').decode(buf));
    expect(err.code).toBe('SCHEMA_UNKNOWN_FINGERPRINT');
    expect(err.details).toEqual({ fingerprint: fingerprintToHex(0x0807060504030201n), schema: 'widget' });
    expect(caught(() => catalog.identify(buf)).code).toBe('SCHEMA_UNKNOWN_FINGERPRINT');
  });

  it('refuses a known fingerprint of another record', () => {
    const gadget = catalog.codec('gadget').encode({ id: 'g1' });
    const err = caught(() => catalog.codec('widget').decode(gadget));
    expect(err.code).toBe('SCHEMA_INCOMPATIBLE');
    expect(err.details).toMatchObject({ schema: 'widget', actual: 'gadget' });
  });

  it('gives bad magic and truncation their codes', () => {
    const codec = catalog.codec<Widget>('widget');
    const good = codec.encode({ id: 'w1', count: 3, label: 'x', owner: null, tags: {} });
    expect(caught(() => codec.decode(Buffer.from('{"id":"w1"}'))).code).toBe('SCHEMA_BAD_MAGIC');
    expect(caught(() => codec.decode(good.subarray(0, 6))).code).toBe('SCHEMA_TRUNCATED');
    expect(caught(() => codec.decode(good.subarray(0, good.length - 1))).code).toBe('SCHEMA_TRUNCATED');
    expect(caught(() => codec.decode(Buffer.concat([good, Buffer.from([1, 2])]))).code).toBe('SCHEMA_TRUNCATED');
  });

  it('refuses an invalid value with the field path', () => {
    const err = caught(() => catalog.codec('widget').encode({ id: 'w1', count: 'many' }));
    expect(err.code).toBe('SCHEMA_INVALID_VALUE');
    expect(err.message).toContain('count: expected int');
  });
});

describe('catalog layout errors', () => {
  const source = (name: string, version: number, schema: unknown = widgetV1): SchemaSource => ({ name, version, schema });
  const code = (fn: () => unknown): string => caught(fn).code;

  it('refuses gaps, doc-only versions, clashes and bad names', () => {
    expect(() => buildSchemaCatalog([source('widget', 1), source('widget', 3, widgetV2)])).toThrow(/expected v2, found v3/);
    const docOnly = { ...widgetV1, doc: 'only the doc changed' };
    expect(() => buildSchemaCatalog([source('widget', 1), source('widget', 2, docOnly)])).toThrow(/same canonical form/);
    expect(() => buildSchemaCatalog([source('widget', 1), source('other', 1)])).toThrow(/same fingerprint/);
    expect(() => buildSchemaCatalog([source('Widget', 1)])).toThrow(/kebab-case/);
    expect(() => buildSchemaCatalog([source('widget', 1, 'string')])).toThrow(/must be a record/);
    expect(code(() => buildSchemaCatalog([source('widget', 1, { type: 'record' })]))).toBe('CONFIG_INVALID');
    expect(code(() => catalog.versions('nope'))).toBe('CONFIG_INVALID');
  });

  it('refuses misnamed and unparsable files', () => {
    expect(() => loadSchemaCatalog(schemaDir({ 'widget/V1.avsc': widgetV1 }))).toThrow(/named v1\.avsc/);
    expect(() => loadSchemaCatalog(schemaDir({ 'widget/v1.avsc': '{"type": "record",' }))).toThrow(/cannot read/);
  });
});

describe('catalog.projection', () => {
  const catalog = loadSchemaCatalog();
  const writer = catalog.latest(SCHEMA_NAMES.ban).schema as { fields: { name: string }[] };
  const projected = { ...writer, fields: writer.fields.filter((f) => ['banId', 'subject', 'expiresAt'].includes(f.name)) };
  const ban = {
    banId: 'b',
    subject: 'ip:192.0.2.1',
    policyId: 'p',
    reason: 'r',
    evidenceCount: 1,
    windowSeconds: 60,
    startedAt: 1,
    expiresAt: 2,
    preview: false,
    escalationLevel: 0,
    origin: 'aggregator',
    httpStatus: 403,
    createdBy: null,
  };

  it('reads a record into the fields the projection keeps', () => {
    const decoded = catalog.projection(SCHEMA_NAMES.ban, projected).decode(catalog.codec(SCHEMA_NAMES.ban).encode(ban));
    expect(decoded).toEqual({ banId: 'b', subject: 'ip:192.0.2.1', expiresAt: 2 });
  });

  it('refuses records of another schema and projections that cannot read the writer', () => {
    const bans = catalog.projection(SCHEMA_NAMES.ban, projected);
    const policy = catalog.codec(SCHEMA_NAMES.policy).encode({ id: 'p', version: 1, description: '', owner: '', mode: 'enforce', enabled: true, definition: '{}', updatedBy: 'u', updatedAt: 0 });
    expect(() => bans.decode(policy)).toThrow(expect.objectContaining({ code: 'SCHEMA_INCOMPATIBLE' }));
    const extra = { ...projected, fields: [...projected.fields, { name: 'missing', type: 'string' }] };
    expect(() => catalog.projection(SCHEMA_NAMES.ban, extra).decode(catalog.codec(SCHEMA_NAMES.ban).encode(ban))).toThrow(expect.objectContaining({ code: 'SCHEMA_INCOMPATIBLE' }));
  });
});
