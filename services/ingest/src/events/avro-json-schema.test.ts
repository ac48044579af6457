import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { loadSchemaCatalog, SCHEMA_NAMES } from '@banstream/schemas';
import { jsonSchemaOfRecord } from './avro-json-schema.js';
import { EVENT_RULES } from './event-rules.js';

const catalog = loadSchemaCatalog();
const avro = catalog.latest(SCHEMA_NAMES.requestEvent);
const fields = (avro.schema as { fields: { name: string; default?: unknown }[] }).fields;

/** What Avro does with a missing field that has a default. */
function withDefaults(value: Record<string, unknown>): Record<string, unknown> {
  const out = { ...value };
  for (const f of fields) if (!(f.name in out) && 'default' in f) out[f.name] = f.default;
  return out;
}

/** Values of every JSON type, at the edges of int and long: each is tried in every field. */
const PROBES: unknown[] = [
  '',
  'x',
  0,
  -1,
  200,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31),
  -(2 ** 31) - 1,
  2 ** 53 - 1,
  2 ** 53,
  -(2 ** 53),
  1.5,
  -0.25,
  1e300,
  null,
  true,
  false,
  {},
  { a: 'b' },
  { a: 1 },
  [],
  ['a'],
];

const anyJson = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom(...PROBES),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constant(null),
  fc.boolean(),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(fc.string({ maxLength: 4 }), fc.integer()), { maxKeys: 3, noNullPrototype: true }),
  fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }),
);

/** A well-typed event, with optional fields sometimes left out. */
const wellTyped = fc.record(
  {
    eventId: fc.string(),
    timestamp: fc.integer({ min: 0 }),
    ip: fc.string(),
    country: fc.option(fc.string({ maxLength: 3 })),
    region: fc.option(fc.string({ maxLength: 3 })),
    asn: fc.option(fc.integer({ min: 0 })),
    method: fc.constant('GET'),
    host: fc.string(),
    path: fc.string(),
    route: fc.option(fc.string()),
    status: fc.integer({ min: 0, max: 999 }),
    userId: fc.option(fc.string()),
    apiKeyHash: fc.option(fc.string()),
    headers: fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { noNullPrototype: true }),
    edgeId: fc.string(),
    latencyMs: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true })),
  },
  { requiredKeys: ['eventId', 'timestamp', 'ip', 'method', 'host', 'path', 'status', 'edgeId'] },
);

/** Then up to two fields get a value of any JSON type, up to two are removed, and sometimes an undeclared one is added. */
const candidate = fc
  .tuple(
    wellTyped,
    fc.array(fc.tuple(fc.constantFrom(...fields.map((f) => f.name)), anyJson), { maxLength: 2 }),
    fc.subarray(
      fields.map((f) => f.name),
      { maxLength: 2 },
    ),
    fc.option(fc.constantFrom('extra', 'countryCode'), { nil: undefined }),
  )
  .map(([event, replaced, removed, extra]) => {
    const out: Record<string, unknown> = { ...event, ...Object.fromEntries(replaced) };
    for (const name of removed) delete out[name];
    if (extra !== undefined) out[extra] = 1;
    return out;
  });

describe('jsonSchemaOfRecord(RequestEvent)', () => {
  const schema = jsonSchemaOfRecord(avro.schema);
  const check = TypeCompiler.Compile(schema);

  it('has exactly the Avro fields, requiring those without a default', () => {
    expect(Object.keys(schema.properties)).toEqual(fields.map((f) => f.name));
    expect([...(schema.required ?? [])].sort()).toEqual(
      fields
        .filter((f) => !('default' in f))
        .map((f) => f.name)
        .sort(),
    );
    expect(schema.additionalProperties).toBe(false);
  });

  const verdicts = new Set<boolean>();

  it('accepts exactly the JSON values that the Avro schema can encode (once defaults are applied)', () => {
    fc.assert(
      fc.property(candidate, (value) => {
        const json = check.Check(value);
        const avroOk = avro.type.isValid(withDefaults(value), { noUndeclaredFields: true });
        verdicts.add(json);
        return json === avroOk;
      }),
      { numRuns: 3_000 },
    );
    expect(verdicts).toEqual(new Set([true, false])); // both sides were exercised
  });

  it('agrees with Avro on every probe value in every field, and on each field left out', () => {
    const base: Record<string, unknown> = { eventId: 'e1', timestamp: 1, ip: '192.0.2.1', method: 'GET', host: 'a', path: '/', status: 200, edgeId: 'edge' };
    const disagreements: string[] = [];
    for (const field of fields) {
      const cases: [string, Record<string, unknown>][] = PROBES.map((probe) => [JSON.stringify(probe), { ...base, [field.name]: probe }]);
      const { [field.name]: _left, ...without } = base;
      cases.push(['(left out)', without]);
      for (const [label, value] of cases) {
        const avroOk = avro.type.isValid(withDefaults(value), { noUndeclaredFields: true });
        if (check.Check(value) !== avroOk) disagreements.push(`${field.name} = ${label}: Avro says ${avroOk}`);
      }
    }
    expect(disagreements).toEqual([]);
  });

  it('refuses rules for fields the record does not have, and Avro types it cannot map', () => {
    expect(() => jsonSchemaOfRecord(avro.schema, { countryCode: { maxLength: 2 } })).toThrow('a rule names "countryCode", which RequestEvent does not have');
    expect(() => jsonSchemaOfRecord({ type: 'record', name: 'R', fields: [{ name: 'b', type: 'bytes' }] })).toThrow('Avro type "bytes" of b is not supported yet');
    expect(() => jsonSchemaOfRecord({ type: 'enum', symbols: [] })).toThrow('not an Avro record schema');
  });

  it('adds the gateway rules on top of the Avro shape', () => {
    const strict = TypeCompiler.Compile(jsonSchemaOfRecord(avro.schema, EVENT_RULES));
    const event = { eventId: 'e1', timestamp: 1, ip: '192.0.2.1', method: 'GET', host: 'a.example', path: '/', status: 200, edgeId: 'edge' };
    expect(strict.Check(event)).toBe(true);
    expect(strict.Check({ ...event, path: `/${'a'.repeat(2048)}` })).toBe(false);
    expect(strict.Check({ ...event, status: 1000 })).toBe(false);
  });
});
