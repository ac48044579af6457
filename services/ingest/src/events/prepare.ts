import type { EncodedEvent } from '@banstream/edge';
import type { Codec, RequestEventBatch, SchemaVersion } from '@banstream/schemas';
import { enrichGeo, type GeoLookup, type GeoOutcome } from '../geo/enrich.js';
import { scanBatch } from './avro-scan.js';
import { decodeAvroBody, decodeJsonBody } from './decode-body.js';
import type { TimeBound } from './event-rules.js';
import type { EventProblem, EventValidator } from './validate.js';

/** A request body turned into events ready for the publisher, or why not. */
export type Prepared =
  | { ok: true; events: EncodedEvent[]; geo: Record<GeoOutcome, number> }
  | { ok: false; code: 'BAD_JSON' | 'BAD_AVRO' | 'INVALID_EVENTS'; message: string; problems?: EventProblem[]; truncated?: boolean; received?: number };

export interface Preparation {
  validator: EventValidator;
  batchCodec: Codec<RequestEventBatch>;
  /** The newest RequestEvent type: writes each validated event's bytes. */
  eventType: SchemaVersion['type'];
  geo: GeoLookup | undefined;
  /** The gateway's clock when the request came, and how far ahead of it events may be dated. */
  time: TimeBound;
}

/** A JSON array: parsed, validated, normalised, enriched. */
export function prepareJson(body: Buffer, p: Preparation): Prepared {
  const decoded = decodeJsonBody(body);
  return decoded.ok ? prepareDecoded(decoded.events, p) : decoded;
}

/** An Avro batch: the byte-level fast path when every event is already in normal form, else as JSON is. */
export function prepareAvro(body: Buffer, p: Preparation): Prepared {
  const fast = scanBatch(body, p.batchCodec.fingerprint, p.geo, p.time.nowMs + p.time.maxFutureMs);
  if (fast !== undefined) return { ok: true, ...fast };
  const decoded = decodeAvroBody(body, p.batchCodec);
  return decoded.ok ? prepareDecoded(decoded.events, p) : decoded;
}

export function prepareDecoded(input: readonly unknown[], p: Preparation): Prepared {
  const checked = p.validator.validate(input, p.time);
  if (!checked.ok) {
    return {
      ok: false,
      code: 'INVALID_EVENTS',
      message: `${checked.invalidEvents} of ${input.length} events are invalid; none of the batch was accepted`,
      problems: checked.problems,
      received: input.length,
      ...(checked.truncated ? { truncated: true } : {}),
    };
  }
  const geo: Record<GeoOutcome, number> = { kept: 0, filled: 0, unknown: 0 };
  // Encoded here, once: the events are valid, so the publisher need not check them again.
  const encoder = new EventEncoder(p.eventType);
  const events = checked.events.map((event, i): EncodedEvent => {
    if (p.geo !== undefined) geo[enrichGeo(event, p.geo)]++;
    return { key: checked.keys[i]!, body: encoder.encode(event) };
  });
  return { ok: true, events, geo };
}

const ENCODE_CHUNK_BYTES = 64 * 1024;

/**
 * Each event's Avro bytes as a view of a shared chunk. avsc's toBuffer allocates a
 * zero-filled Buffer of its own per event (not from Node's pool), which made the
 * allocator and the garbage collector a large part of a JSON batch's cost. The
 * events of one request are offered, sent and released together, so a chunk is
 * not kept alive long by a few of them.
 */
export class EventEncoder {
  private chunk = Buffer.allocUnsafe(0);
  private at = 0;

  constructor(private readonly type: SchemaVersion['type']) {}

  encode(event: unknown): Buffer {
    let end = this.type.encode(event, this.chunk, this.at);
    if (end < 0) {
      // Too little room: avsc returns minus the bytes missing. A new chunk, at least this event's size.
      const size = this.chunk.length - end - this.at;
      this.chunk = Buffer.allocUnsafe(Math.max(ENCODE_CHUNK_BYTES, size));
      this.at = 0;
      end = this.type.encode(event, this.chunk, 0);
    }
    const body = this.chunk.subarray(this.at, end);
    this.at = end;
    return body;
  }
}
