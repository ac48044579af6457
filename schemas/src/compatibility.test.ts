import { describe, expect, it } from 'vitest';
import { loadSchemaCatalog } from './catalog-files.js';
import { checkCompatibility, findCompatibilityProblems } from './compatibility.js';
import { toAvroType } from './avro-type.js';

const catalog = loadSchemaCatalog();

describe('every record in schemas/avro stays readable across its versions', () => {
  // Fails when someone commits a version that breaks the evolution rules.
  it.each([...catalog.names])('%s: every pair of versions, both directions', (name) => {
    expect(findCompatibilityProblems(catalog.versions(name))).toEqual([]);
  });
});

const v1 = {
  type: 'record',
  name: 'Thing',
  namespace: 'test.v1',
  fields: [
    { name: 'id', type: 'string' },
    { name: 'label', type: 'string' },
  ],
};
const withFields = (...extra: object[]): object => ({ ...v1, fields: [...v1.fields, ...extra] });
const renamed = (field: object): object => ({ ...v1, fields: [v1.fields[0], field] });
const versions = (...schemas: object[]) => schemas.map((s, i) => ({ name: 'thing', version: i + 1, type: toAvroType(s) }));

describe('checkCompatibility', () => {
  it('accepts a field added with a default, both ways', () => {
    const v2 = withFields({ name: 'note', type: ['null', 'string'], default: null });
    expect(checkCompatibility(v1, v2)).toEqual({ compatible: true });
    expect(checkCompatibility(v2, v1)).toEqual({ compatible: true });
    expect(findCompatibilityProblems(versions(v1, v2))).toEqual([]);
  });

  it('reports a field added without a default as backward-incompatible', () => {
    const v2 = withFields({ name: 'note', type: 'string' });
    expect(checkCompatibility(v1, v2)).toMatchObject({ compatible: false });
    expect(checkCompatibility(v2, v1)).toEqual({ compatible: true }); // old readers skip it
    const problems = findCompatibilityProblems(versions(v1, v2));
    expect(problems).toEqual([expect.objectContaining({ writerVersion: 1, readerVersion: 2, direction: 'backward' })]);
  });

  it('reports a rename without alias in both directions', () => {
    const v2 = renamed({ name: 'title', type: 'string' });
    const problems = findCompatibilityProblems(versions(v1, v2));
    expect(problems.map((p) => p.direction).sort()).toEqual(['backward', 'forward']);
  });

  it('accepts a rename with an alias for new readers; old readers still need a default', () => {
    const aliased = renamed({ name: 'title', type: 'string', aliases: ['label'] });
    expect(checkCompatibility(v1, aliased)).toEqual({ compatible: true });
    expect(checkCompatibility(aliased, v1)).toMatchObject({ compatible: false });
    const v1WithDefault = renamed({ name: 'label', type: 'string', default: '' });
    expect(findCompatibilityProblems(versions(v1WithDefault, aliased))).toEqual([]);
  });

  it('reports a changed type and an unknown enum symbol', () => {
    expect(checkCompatibility(v1, renamed({ name: 'label', type: 'int' }))).toMatchObject({ compatible: false });
    const e1 = { type: 'enum', name: 'Mode', symbols: ['a', 'b'] };
    const e2 = { ...e1, symbols: ['a', 'b', 'c'] };
    expect(checkCompatibility(e2, e1)).toMatchObject({ compatible: false });
    expect(checkCompatibility(e2, { ...e1, default: 'a' })).toEqual({ compatible: true });
  });

  it('accepts the promotions the spec allows', () => {
    expect(checkCompatibility(v1, renamed({ name: 'label', type: 'bytes' }))).toEqual({ compatible: true });
    expect(checkCompatibility('int', 'long')).toEqual({ compatible: true });
    expect(checkCompatibility('long', 'int')).toMatchObject({ compatible: false });
  });
});
