import type { RequestEvent } from '@banstream/schemas';

export interface EventsAloneCodecs {
  /** Every field of every event of a record (the full batch schema, not the counting projection). */
  decodeRecord(record: Buffer): { events: RequestEvent[] };
  encodeEvent(event: RequestEvent): Buffer;
}

/**
 * The events of one record, each alone, for the DLQ: a dead letter of one invalid
 * event replays without the valid events of its record. The record is decoded in
 * full at most once, on the first call, however many of its events are invalid:
 * decoding it once per invalid event made a record of invalid events cost time
 * quadratic in its length (3,000 events: seconds, past the record budget). An event
 * that cannot be decoded or written alone is the whole record, bytes untouched.
 */
export function eventsAlone(codecs: EventsAloneCodecs, record: Buffer): (index: number) => Buffer {
  let events: RequestEvent[] | undefined;
  let undecodable = false;
  return (index) => {
    if (events === undefined && !undecodable) {
      try {
        events = codecs.decodeRecord(record).events;
      } catch {
        undecodable = true;
      }
    }
    const event = events?.[index];
    if (event === undefined) return record;
    try {
      return codecs.encodeEvent(event);
    } catch {
      return record;
    }
  };
}
