import avro from 'avsc';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeSingleObject, loadSchemaCatalog, requestEvent, SCHEMA_NAMES, SINGLE_OBJECT_HEADER_LENGTH, type RequestEvent } from '@banstream/schemas';
import { countedEventsDecoder, type CountedEvent } from './counted-event.js';
import { countedEventsReader, fieldList, readTail } from './counted-event-reader.js';

const catalog = loadSchemaCatalog();
const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
const slow = { true: countedEventsDecoder(catalog, { headers: true }), false: countedEventsDecoder(catalog, { headers: false }) };

/** avsc's answer: the events, or that it refuses the record. */
function avscRead(record: Buffer, headers: boolean): CountedEvent[] | 'refused' {
  try {
    return slow[`${headers}`].decode(record).events.map((e) => ({ ...e }));
  } catch {
    return 'refused';
  }
}

// Small pools, so that consecutive events repeat a field's bytes (or nearly: same length, one byte apart).
const text = fc.oneof(
  fc.constantFrom('', 'GET', 'GEt', 'FR', 'FR-IDF', 'FR-IDG', 'é', '😀', '/login', '/logim', 'shop.example'),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 6 }),
);
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });
const event: fc.Arbitrary<RequestEvent> = fc.record({
  eventId: text,
  timestamp: fc.oneof(fc.constantFrom(0, 1, -1, 2 ** 52, -(2 ** 52), 1_764_000_000_000), fc.integer()),
  ip: text,
  country: optional(text),
  region: optional(text),
  asn: optional(fc.oneof(fc.constantFrom(0, 4_294_967_295, 2 ** 52), fc.integer())),
  method: text,
  host: text,
  path: text,
  route: optional(text),
  status: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  userId: optional(text),
  apiKeyHash: optional(text),
  headers: fc.dictionary(text, text, { maxKeys: 4 }),
  edgeId: text,
  latencyMs: optional(fc.double()),
  // Any int, bounds and beyond: the reader reads as avsc reads, checkEvent refuses.
  cost: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 1_000_000 }), fc.integer()),
});
const records = fc.array(fc.array(event, { maxLength: 6 }), { minLength: 1, maxLength: 3 }).map((batches) => batches.map((events) => codec.encode({ events })));

describe('countedEventsReader', () => {
  it('is written for the shipped writer schema (a new version must update it)', () => {
    expect(fieldList(catalog.latest(SCHEMA_NAMES.requestEventBatch))).toBe(
      'eventId:string timestamp:long ip:string country:?string region:?string asn:?long method:string host:string ' +
        'path:string route:?string status:int userId:?string apiKeyHash:?string headers:map<string> edgeId:string latencyMs:?double cost:int',
    );
  });

  it('reads what avsc reads, record after record, with or without the headers', () => {
    for (const headers of [true, false]) {
      const read = countedEventsReader(catalog, { headers });
      fc.assert(
        fc.property(records, (batch) => {
          for (const record of batch) expect(read(record)).toEqual(avscRead(record, headers));
        }),
        { numRuns: 300 },
      );
    }
  });

  it("notes where each event's headers start, and readTail finds its user agent (the last one given) and its edge there", () => {
    const read = countedEventsReader(catalog, { headers: false });
    fc.assert(
      fc.property(fc.array(event, { minLength: 1, maxLength: 5 }), fc.array(text, { maxLength: 2 }), (events, agents) => {
        const headers = (e: RequestEvent) => Object.assign(Object.create(null) as Record<string, string>, e.headers, ...agents.map((a) => ({ 'user-agent': a })));
        const record = codec.encode({ events: events.map((e) => ({ ...e, headers: headers(e) })) });
        const tails: number[] = [];
        const read1 = read(record, tails);
        expect(read1).toHaveLength(events.length);
        expect(tails.map((at) => readTail(record, at))).toEqual(events.map((e) => ({ userAgent: headers(e)['user-agent'], edge: e.edgeId })));
      }),
      { numRuns: 200 },
    );
  });

  it('never answers what avsc refuses or reads otherwise: cut, altered or extended records', () => {
    const read = countedEventsReader(catalog, { headers: true });
    const damaged = fc.tuple(records, fc.nat(), fc.nat(255), fc.constantFrom('cut', 'flip', 'extend')).map(([batch, at, byte, how]) => {
      const record = batch[0]!;
      const i = SINGLE_OBJECT_HEADER_LENGTH + (at % Math.max(1, record.length - SINGLE_OBJECT_HEADER_LENGTH));
      if (how === 'cut') return record.subarray(0, i);
      if (how === 'extend') return Buffer.concat([record, Buffer.of(byte)]);
      const copy = Buffer.from(record);
      copy[i] = byte;
      return copy;
    });
    let fallbacks = 0;
    fc.assert(
      fc.property(damaged, (record) => {
        const ours = read(record);
        if (ours === undefined) fallbacks++;
        else expect(ours).toEqual(avscRead(record, true));
      }),
      { numRuns: 500 },
    );
    expect(fallbacks).toBeGreaterThan(0);
  });

  it('leaves blocks written with a negative count and a byte size to avsc, which reads them when the size is exact', () => {
    const fields = (catalog.latest(SCHEMA_NAMES.requestEvent).schema as { fields: { name: keyof RequestEvent; type: avro.Schema }[] }).fields;
    const e = requestEvent({ country: 'FR', asn: 64500, userId: 'u1', headers: { a: '1', b: '2' }, latencyMs: 2.5 });
    const long = (n: number) => avro.Type.forSchema('long').toBuffer(n);
    const sized = (count: number, body: Buffer, size = body.length) => Buffer.concat([long(-count), long(size), body, long(0)]);
    const entries = Buffer.concat(['a', '1', 'b', '2'].map((t) => avro.Type.forSchema('string').toBuffer(t)));
    const header = codec.encode({ events: [] }).subarray(0, SINGLE_OBJECT_HEADER_LENGTH);
    const record = (headersSize: number) => {
      const body = Buffer.concat(fields.map((f) => (f.name === 'headers' ? sized(2, entries, headersSize) : avro.Type.forSchema(f.type).toBuffer(e[f.name]))));
      const events = Buffer.concat([body, body]);
      return Buffer.concat([header, sized(2, events)]);
    };
    for (const withHeaders of [true, false]) {
      const exact = record(entries.length);
      expect(countedEventsReader(catalog, { headers: withHeaders })(exact)).toBeUndefined();
      expect(avscRead(exact, withHeaders)).toHaveLength(2);
      // A size one byte short or long of the items, or negative: refused whether the headers are read or skipped.
      for (const size of [entries.length - 1, entries.length + 1, -2]) {
        const wrong = record(size);
        expect(countedEventsReader(catalog, { headers: withHeaders })(wrong)).toBeUndefined();
        expect(avscRead(wrong, withHeaders)).toBe('refused');
      }
    }
  });

  it('leaves records of another writer schema to avsc', () => {
    const record = Buffer.from(codec.encode({ events: [] }));
    record[5] = record[5]! ^ 1;
    expect(countedEventsReader(catalog, { headers: false })(record)).toBeUndefined();
  });

  it('reads the cost (v2), and a v1 record (no cost) as cost 1, as avsc reads it', () => {
    const read = countedEventsReader(catalog, { headers: false });
    expect(read(codec.encode({ events: [requestEvent({ cost: 5 }), requestEvent()] }))!.map((e) => e.cost)).toEqual([5, 1]);
    const v1 = catalog.versions(SCHEMA_NAMES.requestEventBatch)[0]!;
    const old: Partial<RequestEvent> = requestEvent();
    delete old.cost;
    const record = encodeSingleObject(v1.type, v1.fingerprint, { events: [old] }, 'request-event-batch');
    expect(avscRead(record, false)).toEqual([expect.objectContaining({ cost: 1 })]);
    expect(read(record)).toEqual(avscRead(record, false));
  });
});
