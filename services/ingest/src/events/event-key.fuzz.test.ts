import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalIpv4, eventPartitionKey, formatIp, parseSubject, tryParseIp } from '@banstream/core';
import { isEncoded, type BufferedEvent } from '@banstream/edge';
import { loadSchemaCatalog, requestEvent, SCHEMA_NAMES, type RequestEvent } from '@banstream/schemas';
import { eventKey } from './event-key.js';
import { EVENT_RULES } from './event-rules.js';
import { prepareAvro, prepareJson } from './prepare.js';
import { scanBatch } from './avro-scan.js';
import { EventValidator } from './validate.js';

/**
 * Differential: the gateway's events-topic key (fast Avro path, slow Avro path, JSON
 * path, eventKey itself) must equal core's eventPartitionKey of the address the
 * aggregator will read (the event's normalised ip), for every spelling of an address.
 */
const catalog = loadSchemaCatalog();
const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
const eventType = catalog.latest(SCHEMA_NAMES.requestEvent).type;
const validator = new EventValidator(catalog.latest(SCHEMA_NAMES.requestEvent).schema, EVENT_RULES);
const TIME = { nowMs: 2 ** 52, maxFutureMs: 2 };
const prep = { validator, batchCodec: codec, eventType, geo: undefined, time: TIME };
const asObject = (e: BufferedEvent): RequestEvent => (isEncoded(e) ? (eventType.fromBuffer(Buffer.from(e.body)) as RequestEvent) : e);

const base = requestEvent({ country: 'NZ', path: '/cart' });

const hex = (n: number, pad: boolean, upper: boolean) => {
  const t = pad ? n.toString(16).padStart(4, '0') : n.toString(16);
  return upper ? t.toUpperCase() : t;
};

/** Any RFC 4291 spelling of 16 bytes: case, leading zeros, any zero run compressed, v4 tail, zone id. */
function spellV6(bytes: Uint8Array, o: { upper: boolean; pad: boolean; compress: number; v4tail: boolean; zone: string | null }): string {
  const groups: string[] = [];
  const n = o.v4tail ? 6 : 8;
  for (let g = 0; g < n; g++) groups.push(hex((bytes[2 * g]! << 8) | bytes[2 * g + 1]!, o.pad, o.upper));
  // zero runs (any, not only the longest) may be compressed
  const runs: [number, number][] = [];
  for (let g = 0; g < n; g++) {
    if (((bytes[2 * g]! << 8) | bytes[2 * g + 1]!) !== 0) continue;
    for (let e = g; e < n && ((bytes[2 * e]! << 8) | bytes[2 * e + 1]!) === 0; e++) runs.push([g, e + 1]);
  }
  let text: string;
  const tail = o.v4tail ? `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}` : '';
  if (runs.length > 0 && o.compress % (runs.length + 1) !== 0) {
    const [s, e] = runs[(o.compress % (runs.length + 1)) - 1]!;
    const left = groups.slice(0, s).join(':');
    const right = [...groups.slice(e), ...(o.v4tail ? [tail] : [])].join(':');
    text = `${left}::${right}`;
  } else text = [...groups, ...(o.v4tail ? [tail] : [])].join(':');
  return o.zone === null ? text : `${text}%${o.zone}`;
}

const v4bytes = fc.uint8Array({ minLength: 4, maxLength: 4 });
const v6bytes = fc.oneof(
  fc.uint8Array({ minLength: 16, maxLength: 16 }),
  // IPv4-mapped, IPv4-compatible, NAT64, 6to4, sparse: runs of zeros to compress
  v4bytes.map((b) => Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...b])),
  v4bytes.map((b) => Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ...b])),
  v4bytes.map((b) => Uint8Array.from([0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, ...b])),
  fc.array(fc.constantFrom(0, 0, 0, 1, 0xff, 0x12), { minLength: 16, maxLength: 16 }).map((a) => Uint8Array.from(a)),
);
const v6opts = fc.record({
  upper: fc.boolean(),
  pad: fc.boolean(),
  compress: fc.nat(20),
  v4tail: fc.boolean(),
  zone: fc.option(fc.constantFrom('eth0', '1', 'en0.1', 'lo-x:y', ''), { nil: null }),
});

const spelling: fc.Arbitrary<string> = fc.oneof(
  v4bytes.map((b) => formatIp(b)),
  // leading zeros in v4 (refused by all), and v4 with a zone (refused)
  fc.tuple(v4bytes, fc.nat(3)).map(([b, i]) => Array.from(b, (x, j) => (j === i ? `0${x}` : `${x}`)).join('.')),
  fc.tuple(v6bytes, v6opts).map(([b, o]) => spellV6(b, o)),
  fc.tuple(v4bytes, fc.constantFrom('::ffff:', '::FFFF:', '0:0:0:0:0:ffff:', '0000:0000:0000:0000:0000:FFFF:', '::0:ffff:', '::ffff:0:')).map(([b, p]) => `${p}${b.join('.')}`),
);

/** What the aggregator takes as the client's network: eventPartitionKey of the published ip's text, via a subject. */
function aggregatorKey(publishedIp: string): string {
  const part = parseSubject(`ip:${publishedIp}`)[0]!;
  return eventPartitionKey(part.value);
}

describe('the gateway keys every event by its client network, whatever the spelling of the address', () => {
  it('fast path, slow Avro path, JSON path and eventKey agree with core eventPartitionKey', () => {
    let parsed = 0;
    let fast = 0;
    const deadline = Date.now() + 4_000;
    fc.assert(
      fc.property(fc.array(spelling, { minLength: 1, maxLength: 3 }), (ips) => {
        if (Date.now() > deadline) return true;
        const events = ips.map((ip, i) => ({ ...base, eventId: `e${i}`, ip }));
        const ok = ips.map((ip) => tryParseIp(ip));
        const allOk = ok.every((a) => a !== undefined);
        for (let i = 0; i < ips.length; i++) {
          const a = ok[i];
          if (a === undefined) continue;
          parsed++;
          const expected = eventPartitionKey(ips[i]!);
          expect(eventKey(a), ips[i]).toBe(expected);
          expect(eventPartitionKey(a.text), ips[i]).toBe(expected);
          expect(aggregatorKey(a.text), ips[i]).toBe(expected);
          const v4 = canonicalIpv4(ips[i]!);
          if (v4 >= 0) expect(eventKey(v4), ips[i]).toBe(expected);
        }
        const json = prepareJson(Buffer.from(JSON.stringify(events)), prep);
        expect(json.ok, JSON.stringify(ips)).toBe(allOk);
        let body: Buffer;
        try {
          body = codec.encode({ events });
        } catch {
          return true;
        }
        const avro = prepareAvro(body, prep);
        expect(avro.ok, JSON.stringify(ips)).toBe(allOk);
        const scanned = scanBatch(body, codec.fingerprint, undefined, TIME.nowMs + TIME.maxFutureMs);
        if (scanned !== undefined) fast++;
        for (const out of [json, avro, ...(scanned ? [{ ok: true as const, events: scanned.events }] : [])]) {
          if (!out.ok) continue;
          out.events.forEach((e, i) => {
            const published = asObject(e).ip;
            expect(published, ips[i]).toBe(ok[i]!.text);
            expect(e.key, ips[i]).toBe(eventPartitionKey(ips[i]!));
            expect(e.key, ips[i]).toBe(aggregatorKey(published));
          });
        }
        return true;
      }),
      { numRuns: 20_000 },
    );
    expect(parsed).toBeGreaterThan(500);
    expect(fast).toBeGreaterThan(50);
  });

  it('known spellings', () => {
    const cases: [string, string][] = [
      ['::ffff:203.0.113.7', '203.0.113.0/24'],
      ['::FFFF:CB00:7107', '203.0.113.0/24'],
      ['0:0:0:0:0:ffff:cb00:7107', '203.0.113.0/24'],
      ['0000:0000:0000:0000:0000:FFFF:203.0.113.7', '203.0.113.0/24'],
      ['2001:DB8:1:2::7', '2001:db8:1::/48'],
      ['2001:0db8:0001:0002:0000:0000:0000:0007', '2001:db8:1::/48'],
      ['fe80::1%eth0', 'fe80::/48'],
      ['::ffff:128.0.0.1', '128.0.0.0/24'],
      ['255.255.255.255', '255.255.255.0/24'],
      ['0.0.0.0', '0.0.0.0/24'],
    ];
    for (const [ip, key] of cases) {
      const out = prepareJson(Buffer.from(JSON.stringify([{ ...base, ip }])), prep);
      expect(out.ok, ip).toBe(true);
      if (out.ok) expect(out.events[0]!.key, ip).toBe(key);
      const avro = prepareAvro(codec.encode({ events: [{ ...base, ip }] }), prep);
      if (avro.ok) expect(avro.events[0]!.key, ip).toBe(key);
    }
  });
});
