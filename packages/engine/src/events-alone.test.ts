import { describe, expect, it } from 'vitest';
import { loadSchemaCatalog, requestEvent, SCHEMA_NAMES, type RequestEvent } from '@banstream/schemas';
import { eventsAlone, type EventsAloneCodecs } from './events-alone.js';

const catalog = loadSchemaCatalog();
const batchCodec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
const eventCodec = catalog.codec(SCHEMA_NAMES.requestEvent);

const event = (i: number): RequestEvent => requestEvent({ eventId: `e${i}`, timestamp: 1_800_000_000_000 + i, ip: '192.0.2.1', path: `/${i}`, userId: `user-${i}`, headers: { 'user-agent': 'x' } });

/** The real codecs, counting full decodes of a record. */
function counting(): EventsAloneCodecs & { decodes: number } {
  const codecs = {
    decodes: 0,
    decodeRecord: (b: Buffer) => {
      codecs.decodes++;
      return batchCodec.decode(b);
    },
    encodeEvent: (e: RequestEvent) => eventCodec.encode(e),
  };
  return codecs;
}

describe('eventsAlone', () => {
  it('decodes a record of 3,000 events once, however many of them go to the DLQ alone (was once per event: quadratic)', () => {
    const events = Array.from({ length: 3_000 }, (_, i) => event(i));
    const record = batchCodec.encode({ events });
    const codecs = counting();
    const alone = eventsAlone(codecs, record);
    const out = events.map((_, i) => alone(i));
    expect(codecs.decodes).toBe(1);
    // Each is that event alone, every field kept, as decoding the record for it would give.
    for (const i of [0, 1, 1_499, 2_999]) expect(eventCodec.decode(out[i]!)).toEqual(events[i]);
    expect(out.every((b, i) => b.equals(eventCodec.encode(events[i]!)))).toBe(true);
  });

  it('decodes nothing until an event is asked for', () => {
    const codecs = counting();
    eventsAlone(codecs, batchCodec.encode({ events: [event(0)] }));
    expect(codecs.decodes).toBe(0);
  });

  it('gives the whole record, bytes untouched, when it cannot be decoded in full, and tries that once', () => {
    const record = batchCodec.encode({ events: [event(0), event(1)] });
    const cut = record.subarray(0, record.length - 3);
    const codecs = counting();
    const alone = eventsAlone(codecs, cut);
    expect([alone(0), alone(1), alone(0)].map((b) => b === cut)).toEqual([true, true, true]);
    expect(codecs.decodes).toBe(1);
  });

  it('gives the whole record for an index the full decode does not have (the counting reader and avsc disagreeing)', () => {
    const record = batchCodec.encode({ events: [event(0)] });
    const alone = eventsAlone(counting(), record);
    expect(alone(1)).toBe(record);
    expect(alone(-1)).toBe(record);
  });

  it('gives the whole record when the event cannot be written alone', () => {
    const record = batchCodec.encode({ events: [event(0)] });
    const alone = eventsAlone(
      {
        ...counting(),
        encodeEvent: () => {
          throw new Error('no');
        },
      },
      record,
    );
    expect(alone(0)).toBe(record);
  });
});
