import { describe, expect, it } from 'vitest';
import avro from 'avsc';
import fc from 'fast-check';
import { AvroCursor, loadSchemaCatalog, requestEvent, SCHEMA_NAMES, type RequestEvent } from '@banstream/schemas';
import { avroLong, concatBatch, encodedTimestamp } from './encoded.js';

const catalog = loadSchemaCatalog();
const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
const eventType = catalog.latest(SCHEMA_NAMES.requestEvent).type;

/** Fields of varying widths and nulls, so the batches cover many encodings. */
const event = (i: number): RequestEvent =>
  requestEvent({
    eventId: `e${i}`,
    timestamp: 1_700_000_000_000 + i,
    ip: `192.0.2.${i % 256}`,
    country: i % 2 ? 'FR' : null,
    asn: i,
    path: `/p/${i}`,
    headers: { 'user-agent': `ua ${i}` },
    latencyMs: i / 3,
  });

describe('concatBatch', () => {
  it('writes byte for byte what avsc writes for the whole batch, at every count width', () => {
    const header = codec.encode({ events: [] }).subarray(0, 10);
    for (const n of [0, 1, 63, 64, 500, 8_200]) {
      const events = Array.from({ length: n }, (_, i) => event(i));
      expect(
        concatBatch(
          header,
          events.map((e) => eventType.toBuffer(e)),
        ).equals(codec.encode({ events })),
      ).toBe(true);
    }
  });
});

describe('avroLong', () => {
  it('encodes like avsc', () => {
    const long = avro.Type.forSchema('long');
    for (const n of [0, -1, 1, 63, -64, 64, 300, -300, 2 ** 31, 4_294_967_295, 1_700_000_000_000, -(2 ** 40)]) {
      expect(Buffer.from(avroLong(n))).toEqual(long.toBuffer(n));
    }
  });

  it('writes what the contract reads back (minimal, exact) for every integer within ±2^52', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 52), max: 2 ** 52 }), (n) => {
        const c = new AvroCursor(Buffer.from(avroLong(n)), 0);
        expect(c.long()).toBe(n);
        expect(c.pos).toBe(c.buf.length);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('encodedTimestamp', () => {
  it('reads the event time off an encoded RequestEvent, and nothing off bytes cut short', () => {
    for (const [eventId, timestamp] of [
      ['', 0],
      ['e-1', 1_795_000_000_123],
      ['x'.repeat(300), 42],
    ] as const) {
      const body = eventType.toBuffer({ ...event(1), eventId, timestamp });
      expect(encodedTimestamp(body)).toBe(timestamp);
      expect(encodedTimestamp(body.subarray(0, avroLong(Buffer.byteLength(eventId)).length + Buffer.byteLength(eventId)))).toBeUndefined();
    }
  });

  it('reads what the contract reads, for any event id and any timestamp an event can carry', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.integer({ min: 1, max: 2 ** 52 }), (eventId, timestamp) => {
        const body = eventType.toBuffer({ ...event(1), eventId, timestamp });
        const c = new AvroCursor(body, 0);
        c.string();
        expect(encodedTimestamp(body)).toBe(c.long());
      }),
      { numRuns: 1_000 },
    );
  });
});
