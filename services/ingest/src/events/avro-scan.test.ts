import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { eventPartitionKey, formatIpv4, normalisePath } from '@banstream/core';
import { isEncoded, type BufferedEvent } from '@banstream/edge';
import { loadSchemaCatalog, requestEvent, SCHEMA_NAMES, type RequestEvent } from '@banstream/schemas';
import type { GeoLookup } from '../geo/enrich.js';
import { scanBatch } from './avro-scan.js';
import { EVENT_RULES } from './event-rules.js';
import { prepareDecoded } from './prepare.js';
import { EventValidator } from './validate.js';

const catalog = loadSchemaCatalog();
const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
const eventType = catalog.latest(SCHEMA_NAMES.requestEvent).type;
const validator = new EventValidator(catalog.latest(SCHEMA_NAMES.requestEvent).schema, EVENT_RULES);
/** A stand-in database: some networks known (one with a region and an ASN), others not. */
const lookup = (ip: string) => (ip.startsWith('203.') ? { country: 'AU', region: null, asn: null } : ip.startsWith('2001:') ? { country: 'FR', region: 'FR-IDF', asn: 3215 } : undefined);
const geo: GeoLookup = { lookup, lookupIpv4: (address) => lookup(formatIpv4(address)) };
const asObject = (e: BufferedEvent): RequestEvent => (isEncoded(e) ? (eventType.fromBuffer(Buffer.from(e.body)) as RequestEvent) : e);
/** The bound falls among the tricky timestamps below: 2^52 + 2 is the latest accepted. */
const TIME = { nowMs: 2 ** 52, maxFutureMs: 2 };
const LATEST = TIME.nowMs + TIME.maxFutureMs;

const canonical = requestEvent({ ip: '203.0.113.7', path: '/cart', headers: { 'user-agent': 'curl/8' } });

/** Values at and around every rule, in normal form or not, valid or not. */
const tricky: { [K in keyof RequestEvent]-?: RequestEvent[K][] } = {
  eventId: ['', 'x', 'a'.repeat(128), 'a'.repeat(129), 'é'],
  timestamp: [0, 1, 2 ** 52, 2 ** 52 + 2, 2 ** 53 - 2, -5],
  ip: ['198.51.100.1', '2001:db8::1', '2001:DB8::1', '::ffff:203.0.113.1', '010.0.0.1', 'nope', '', '10.0.0.1', '203.0.113.255', '0.0.0.0', '1.2.3.4.5', '256.1.1.1', '203.0.113.07'],
  country: [null, 'NZ', 'nz', 'NZL', 'N1', 'ÉS'],
  region: [null, 'NZ-AUK', 'nz-auk', 'NZ-AUKL', 'NZ', 'NZ-1'],
  asn: [null, 0, 4_294_967_295, 4_294_967_296, -1],
  method: ['POST', 'post', 'M-SEARCH', 'GET /', '', 'A'.repeat(17)],
  host: ['a.example', 'A.example', 'a.example:8443', 'a.example.', '', 'h'.repeat(256), '[::1]:80', '[::1]', 'a.example:', 'x:80:90', '2001:db8::1'],
  path: [
    '/',
    '/a?b=1',
    '/a#x',
    '?x',
    '',
    `/${'p'.repeat(2047)}`,
    `/${'p'.repeat(2048)}`,
    '/ü',
    // Spellings normalisePath changes (escapes, dot segments, runs of /, absolute form) and near misses it keeps.
    '/%61dmin',
    '/a%2fb',
    '/a%2Fb',
    '/a/../b',
    '/a/./b',
    '/./',
    '/..',
    '//a',
    '/a//',
    '/%2e%2E/x',
    '/.well-known',
    '/a..',
    '/a%zz',
    '/a%',
    '/a%4',
    'http://h/a',
    'a',
    '*',
    '/a%C3%BC',
    '/a%c3',
    '/a%3F',
    `/${'a/..'.repeat(400)}`,
  ],
  route: [null, '', '/users/:id', 'r'.repeat(513)],
  status: [0, 99, 100, 999, 1000, -1],
  userId: [null, '', 'u'.repeat(256), 'u'.repeat(257)],
  apiKeyHash: [null, 'ab'.repeat(32), 'AB'.repeat(32), 'ab'.repeat(31), 'zz'.repeat(32)],
  headers: [
    {},
    { 'x-a': '1', 'x-b': '2' },
    { 'X-A': '1' },
    { authorization: 'x' },
    { 'bad name': '1' },
    { 'x-a': 'v'.repeat(1025) },
    Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`h${i}`, 'v'])),
  ],
  edgeId: ['e', '', 'e'.repeat(129)],
  latencyMs: [null, 0, 12.5, -0.5, Number.NaN, Number.POSITIVE_INFINITY],
  cost: [1, 5, 1_000_000, 0, -1, 1_000_001],
};
const FIELDS = Object.keys(tricky) as (keyof RequestEvent)[];

const mutated = fc.array(fc.tuple(fc.constantFrom(...FIELDS), fc.nat()), { maxLength: 3 }).map((changes) => {
  const event: Record<string, unknown> = { ...canonical };
  for (const [field, pick] of changes) event[field] = tricky[field][pick % tricky[field].length];
  return event as unknown as RequestEvent;
});

describe('scanBatch (the Avro fast path)', () => {
  it('gives exactly what the slow path gives (decode, validate, normalise, enrich) whenever it takes a batch', () => {
    let fastTaken = 0;
    fc.assert(
      fc.property(fc.array(mutated, { minLength: 1, maxLength: 4 }), (events) => {
        let body: Buffer;
        try {
          body = codec.encode({ events });
        } catch {
          return true; // not even encodable (NaN is, -1 for an int is not…): no batch to compare
        }
        const fast = scanBatch(body, codec.fingerprint, geo, LATEST);
        if (fast === undefined) return true;
        fastTaken++;
        const slow = prepareDecoded(codec.decode(body).events, { validator, batchCodec: codec, eventType, geo, time: TIME });
        expect(slow.ok).toBe(true);
        if (!slow.ok) return false;
        expect(fast.events.map(asObject)).toEqual(slow.events.map(asObject));
        expect(fast.events.map((e) => e.key)).toEqual(slow.events.map((e) => eventPartitionKey(asObject(e).ip)));
        expect(fast.events.map((e) => e.timestamp)).toEqual(slow.events.map((e) => asObject(e).timestamp));
        expect(fast.geo).toEqual(slow.geo);
        return true;
      }),
      { numRuns: 3_000 },
    );
    expect(fastTaken).toBeGreaterThan(300); // the comparison really ran
  });

  it('takes batches of events already in normal form, filling the country and keeping a supplied one', () => {
    const events = [canonical, { ...canonical, ip: '2001:db8::1', region: 'FR-PAC' }, { ...canonical, ip: '198.51.100.1' }, { ...canonical, country: 'NZ' }];
    const fast = scanBatch(codec.encode({ events }), codec.fingerprint, geo, LATEST)!;
    expect(fast.events.map(asObject).map((e) => [e.country, e.region, e.asn])).toEqual([
      ['AU', null, null],
      ['FR', 'FR-PAC', 3215],
      [null, null, null],
      ['NZ', null, null],
    ]);
    expect(fast.events.map((e) => e.key)).toEqual(['203.0.113.0/24', '2001:db8::/48', '198.51.100.0/24', '203.0.113.0/24']);
    expect(fast.geo).toEqual({ kept: 1, filled: 2, unknown: 1 });
  });

  it('leaves to the slow path whatever needs normalising, another writer schema, or bytes that are not a batch', () => {
    const body = codec.encode({ events: [canonical] });
    expect(scanBatch(codec.encode({ events: [{ ...canonical, method: 'get' }] }), codec.fingerprint, geo, LATEST)).toBeUndefined();
    expect(scanBatch(body, codec.fingerprint + 1n, geo, LATEST)).toBeUndefined();
    expect(scanBatch(body.subarray(0, body.length - 3), codec.fingerprint, geo, LATEST)).toBeUndefined();
    expect(scanBatch(Buffer.concat([body, Buffer.of(0)]), codec.fingerprint, geo, LATEST)).toBeUndefined();
    expect(scanBatch(Buffer.from('[]'), codec.fingerprint, geo, LATEST)).toBeUndefined();
  });

  it('takes an event only when normalisePath would leave its path as it is (hostile spellings generated)', () => {
    const piece = fc.oneof(
      fc.constantFrom('/', '//', '.', '..', '%2e', '%2E', '%2f', '%2F', '%', '%zz', '%4', '?', '#', 'a', 'admin', '~', 'http://h', '*'),
      fc.integer({ min: 0, max: 127 }).map((code) => `%${code.toString(16).padStart(2, '0')}`),
    );
    let taken = 0;
    fc.assert(
      // Half of them normalised: the scan must take those.
      fc.property(fc.array(piece, { minLength: 1, maxLength: 10 }), fc.boolean(), (parts, normalised) => {
        const path = normalised ? normalisePath(parts.join('')) || '/' : parts.join('');
        const fast = scanBatch(codec.encode({ events: [{ ...canonical, path }] }), codec.fingerprint, geo, LATEST);
        if (fast !== undefined) taken++;
        expect(fast !== undefined, JSON.stringify(path)).toBe(normalisePath(path) === path);
      }),
      { numRuns: 3_000 },
    );
    expect(taken).toBeGreaterThan(1_000);
  });

  it('leaves to the slow path an event naming a header twice (possible on the wire, not in an object), whatever came before it', () => {
    const twoHeaders = { ...canonical, headers: { 'x-a': '1', 'x-b': '2' } };
    const body = codec.encode({ events: [canonical, twoHeaders, canonical] });
    expect(scanBatch(body, codec.fingerprint, geo, LATEST)).toBeDefined();
    const at = body.lastIndexOf('x-b');
    body.write('x-a', at, 'latin1');
    expect(scanBatch(body, codec.fingerprint, geo, LATEST)).toBeUndefined();
  });
});
