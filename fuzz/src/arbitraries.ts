import fc from 'fast-check';
import type { Node } from './reference.js';

/**
 * Values for a schema, generated from the schema itself (any record type), and for
 * RequestEvent a generator of events an edge would send (most in the gateway's
 * normal form, so its fast path takes them), near the rules' edges or past them.
 */

const LONG_LIMIT = 2 ** 53 - 2;

/** Any code point, lone surrogates included (fast-check's own 'binary' unit costs a second at start). */
const codePoint = fc.integer({ min: 0, max: 0x10ffff }).map((cp) => String.fromCodePoint(cp));
const text = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: codePoint, maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constantFrom('', '__proto__', 'constructor', 'toString', '\uFEFFbom', 'é', '😀', 'x'.repeat(200)) },
);

const long = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.integer({ min: -LONG_LIMIT, max: LONG_LIMIT }),
  fc.constantFrom(LONG_LIMIT, -LONG_LIMIT, 2 ** 52, -(2 ** 52), 2 ** 49 - 1, 2 ** 49, 2 ** 48, 1_764_000_000_000, 2 ** 31, -(2 ** 31) - 1),
);

const int = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.integer(), fc.constantFrom(2 ** 31 - 1, -(2 ** 31)));

/** Map keys twice over make the wire hold duplicates only through mutation; objects cannot. */
function mapOf(values: fc.Arbitrary<unknown>): fc.Arbitrary<Record<string, unknown>> {
  return fc.array(fc.tuple(text, values), { maxLength: 4 }).map((entries) => {
    const out = Object.create(null) as Record<string, unknown>;
    for (const [k, v] of entries) out[k] = v;
    return out;
  });
}

export function valueOf(node: Node, depth = 0): fc.Arbitrary<unknown> {
  switch (node.kind) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'int':
      return int;
    case 'long':
      return long;
    case 'float':
      return fc.float();
    case 'double':
      return fc.double();
    case 'bytes':
      return fc.uint8Array({ maxLength: 16 }).map((b) => Buffer.from(b));
    case 'string':
      return text;
    case 'fixed':
      return fc.uint8Array({ minLength: node.size, maxLength: node.size }).map((b) => Buffer.from(b));
    case 'enum':
      return fc.constantFrom(...node.symbols);
    case 'union':
      return fc.oneof(...node.branches.map((b) => valueOf(b, depth)));
    case 'array':
      return fc.array(valueOf(node.items, depth + 1), { maxLength: depth > 1 ? 1 : 4 });
    case 'map':
      return mapOf(valueOf(node.values, depth + 1));
    case 'record': {
      const fields: Record<string, fc.Arbitrary<unknown>> = {};
      for (const f of node.fields) fields[f.name] = valueOf(f.type, depth);
      return fc.record(fields);
    }
  }
}

const byte = fc.integer({ min: 0, max: 255 });
const ipv4 = fc.oneof(
  fc.tuple(fc.integer({ min: 1, max: 223 }), byte, byte, byte).map((p) => p.join('.')),
  fc.constantFrom('203.0.113.7', '203.0.113.8', '198.51.100.1'),
);
const ipv6 = fc.constantFrom('2001:db8::1', '2001:db8:85a3::8a2e:370:7334', '2001:db8:1::2', '::1', '2a00:1450:4007:80f::200e');
const lowerHex = fc.stringMatching(/^[0-9a-f]{64}$/);
const token = (re: RegExp) => fc.stringMatching(re);
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 2 });

/** What an edge sends: valid, in normal form; repeated values across events are likely (small pools). */
const normalEvent = fc.record({
  eventId: fc.oneof(fc.uuid(), token(/^[0-9A-Z]{26}$/)),
  // Mostly realistic times (the gateway refuses a whole batch for one event dated past its clock, FUZZ_TIME), some extremes.
  timestamp: fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 }) }, { weight: 1, arbitrary: fc.constantFrom(1, 2 ** 52, 2 ** 53 - 2) }),
  ip: fc.oneof({ weight: 3, arbitrary: ipv4 }, { weight: 1, arbitrary: ipv6 }),
  country: optional(fc.constantFrom('FR', 'US', 'NZ')),
  region: optional(fc.constantFrom('FR-IDF', 'NZ-AUK', 'US-CA')),
  asn: optional(fc.oneof(fc.integer({ min: 0, max: 4_294_967_295 }), fc.constantFrom(0, 4_294_967_295))),
  method: fc.oneof(fc.constantFrom('GET', 'POST', 'PUT', 'M-SEARCH'), token(/^[A-Z]{1,16}$/)),
  host: fc.oneof(fc.constantFrom('shop.example', 'api.example'), token(/^[a-z0-9]{1,10}\.[a-z]{2,6}$/)),
  // Escapes, dot segments and `//` too: the gateway's scan must leave exactly those the normaliser would change to its slow path.
  path: fc.oneof(fc.constantFrom('/', '/login', '/cart'), token(/^\/[a-zA-Z0-9/._-]{0,40}$/), token(/^\/([a-z.\/]|%[0-9a-fA-F]{2}|%){0,24}$/)),
  route: optional(fc.constantFrom('/users/:id', '')),
  status: fc.oneof(fc.constantFrom(0, 200, 401, 404, 429, 503), fc.integer({ min: 100, max: 999 })),
  userId: optional(fc.oneof(fc.constantFrom('u1', 'alice'), fc.string({ maxLength: 20 }))),
  apiKeyHash: optional(lowerHex),
  headers: fc.dictionary(token(/^[a-z][a-z0-9-]{0,15}$/), fc.string({ maxLength: 30 }), { maxKeys: 3 }),
  edgeId: fc.constantFrom('edge-1', 'edge-2'),
  latencyMs: optional(fc.oneof(fc.double({ min: 0, max: 1e4, noNaN: true }), fc.constant(0))),
  // Mostly 1, as most requests cost; the bounds themselves often.
  cost: fc.oneof({ weight: 3, arbitrary: fc.constant(1) }, { weight: 2, arbitrary: fc.constantFrom(5, 1_000_000) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 1_000_000 }) }),
});

/** Values at and past each rule of the gateway, in normal form or not. */
const TRICKY: Record<string, unknown[]> = {
  eventId: ['', 'a'.repeat(128), 'a'.repeat(129), 'é'],
  timestamp: [0, -5, 2 ** 52 + 2],
  ip: ['2001:DB8::1', '::ffff:203.0.113.1', '010.0.0.1', 'nope', '', '203.0.113.07', '1.2.3.4.5'],
  country: ['nz', 'NZL', 'ÉS'],
  region: ['nz-auk', 'NZ-AUKL', 'NZ'],
  asn: [4_294_967_296, -1],
  method: ['post', 'GET /', '', 'A'.repeat(17)],
  host: ['A.example', 'a.example:8443', 'a.example.', '', 'h'.repeat(256), '[::1]:80', '2001:db8::1'],
  path: ['/a?b=1', '/a#x', '?x', '', `/${'p'.repeat(2048)}`, '/ü', '/%61dmin', '/a/../admin', '//admin', '/%2F', `/${'%'.repeat(1000)}`],
  route: ['r'.repeat(513)],
  status: [99, 1000, -1],
  userId: ['u'.repeat(257)],
  apiKeyHash: ['AB'.repeat(32), 'ab'.repeat(31), 'zz'.repeat(32)],
  headers: [
    { 'X-A': '1' },
    { authorization: 'x' },
    { 'bad name': '1' },
    { 'x-a': 'v'.repeat(1025) },
    Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`h${i}`, 'v'])),
    { ['__proto__']: 'p', constructor: 'c' },
  ],
  edgeId: ['', 'e'.repeat(129)],
  latencyMs: [-0.5, Number.NaN, Number.POSITIVE_INFINITY],
  cost: [0, -1, 1_000_001, 2 ** 31 - 1, -(2 ** 31)],
};
const TRICKY_FIELDS = Object.keys(TRICKY);

export function eventOf(node: Node): fc.Arbitrary<unknown> {
  const tweaked = fc.tuple(normalEvent, fc.array(fc.tuple(fc.constantFrom(...TRICKY_FIELDS), fc.nat()), { maxLength: 2 })).map(([event, changes]) => {
    const out: Record<string, unknown> = { ...event, headers: headerObject(event.headers) };
    for (const [field, i] of changes) {
      const value = TRICKY[field]![i % TRICKY[field]!.length];
      out[field] = field === 'headers' ? headerObject(value as Record<string, string>) : value;
    }
    return out;
  });
  return fc.oneof({ weight: 6, arbitrary: tweaked }, { weight: 1, arbitrary: valueOf(node) });
}

/** Own keys only, `__proto__` included, as a decoded map holds them. */
function headerObject(headers: Record<string, string>): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const k of Object.getOwnPropertyNames(headers)) out[k] = headers[k]!;
  return out;
}
