import type { RequestEvent } from '@banstream/schemas';
import { estimateEventBytes } from './event-size.js';

/**
 * One RequestEvent already in Avro binary (the newest schema, no header) with its
 * partition key: what a gateway that received Avro and checked it in place hands
 * over, so the bytes are neither decoded nor encoded again.
 */
export interface EncodedEvent {
  readonly key: string;
  readonly body: Uint8Array;
  /** The event's timestamp when the caller read it already (else read off the body). */
  readonly timestamp?: number;
}

/** What the buffer holds: events as objects (publish) or already encoded (offer). */
export type BufferedEvent = RequestEvent | EncodedEvent;

export function isEncoded(event: BufferedEvent): event is EncodedEvent {
  return (event as Partial<EncodedEvent>).body !== undefined;
}

/**
 * The event time of an encoded RequestEvent, read off its bytes without decoding it:
 * the schema starts with `eventId` (a string: length, then bytes) and `timestamp` (a
 * long). Undefined when the bytes end early (the encoder's check refuses them later).
 */
export function encodedTimestamp(body: Uint8Array): number | undefined {
  const length = readLong(body, 0);
  if (length === undefined || length.value < 0) return undefined;
  return readLong(body, length.next + length.value)?.value;
}

/** An Avro long (zigzag varint) at `at`, for values within ±2^52. */
function readLong(bytes: Uint8Array, at: number): { value: number; next: number } | undefined {
  let n = 0;
  let scale = 1;
  for (let i = at; i < bytes.length && i < at + 8; i++) {
    const b = bytes[i]!;
    n += (b & 0x7f) * scale;
    scale *= 0x80;
    if (b < 0x80) return { value: n % 2 === 0 ? n / 2 : -(n + 1) / 2, next: i + 1 };
  }
  return undefined;
}

/** The entry, the key string and the Buffer view; the bytes themselves count in full. */
const ENCODED_OVERHEAD_BYTES = 160;

export function estimateBytes(event: BufferedEvent): number {
  return isEncoded(event) ? ENCODED_OVERHEAD_BYTES + event.key.length + event.body.length : estimateEventBytes(event);
}

/**
 * A RequestEventBatch record from event bodies: the single-object header, then an
 * Avro array as avsc writes it (one block: its count, the items, then 0). Pure byte
 * copying, so it costs what a memcpy costs.
 */
export function concatBatch(header: Uint8Array, bodies: readonly Uint8Array[]): Buffer {
  let size = header.length + 1;
  for (const b of bodies) size += b.length;
  const count = avroLong(bodies.length);
  if (bodies.length > 0) size += count.length;
  const out = Buffer.allocUnsafe(size);
  out.set(header, 0);
  let at = header.length;
  if (bodies.length > 0) {
    out.set(count, at);
    at += count.length;
    for (const b of bodies) {
      out.set(b, at);
      at += b.length;
    }
  }
  out[at] = 0;
  return out;
}

/** Avro's encoding of a long (zigzag, then base-128 varint), for integers within ±2^52. */
export function avroLong(n: number): Uint8Array {
  const bytes: number[] = [];
  let v = n >= 0 ? n * 2 : -n * 2 - 1;
  while (v >= 0x80) {
    bytes.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  bytes.push(v);
  return Uint8Array.from(bytes);
}
