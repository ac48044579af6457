import { createRequire } from 'node:module';

/**
 * kafkajs 2.2.4's reading of one record of a batch (recordBatch/record/v0/decoder.js),
 * with the same result for every record a Kafka broker writes, except that bytes no
 * broker writes cannot make it run long (found by `npm run fuzz`, fuzz/src/fetch.ts):
 * - a length below -1 (a key, a value, a header's key or value) moved kafkajs's read
 *   position backwards: the same bytes were read again, header after header;
 * - a header count is taken as it is written: `new Array(count)` (a 121-byte batch
 *   made it allocate 132 MB) and, with lengths going backwards, a loop that read until
 *   the heap ran out (3.7 GB, the process killed);
 * - the headers were gathered with an object spread per header: quadratic, so one
 *   record of many distinct headers (which the broker itself accepts) held the event
 *   loop for minutes.
 * Here such a length, a header count more than the bytes left could hold, more than
 * MAX_HEADERS_PER_BATCH headers in a batch or a name over MAX_HEADER_NAME_BYTES is
 * refused (the batch is then a stand-in:
 * unreadable-batches.ts), and headers are gathered in one pass, each name an own
 * property (kafkajs's `obj[name] === undefined` took an inherited `toString` for a
 * repeated header: `[Function, value]`).
 */

const require = createRequire(import.meta.url);

/**
 * The most headers one batch's records may carry together: as many as records a batch
 * may hold (unreadable-batches.ts). An empty header takes two bytes, so a 31 KB gzip
 * batch carried 16 million of them (1.7 GB of objects, the event loop held 10 s).
 */
export const MAX_HEADERS_PER_BATCH = 131_072;

/**
 * The longest header name read, in bytes: V8 hashes a longer string by its length
 * alone, so distinct names of one length past this all collide, and gathering them
 * is quadratic again (2,000 names of 16 KB held the event loop 5 s).
 */
export const MAX_HEADER_NAME_BYTES = 16_383;

/** Headers read so far per batch (kafkajs hands every record of a batch the same context object). */
const headersOfBatch = new WeakMap<object, number>();
const LONG_MODULE = 'kafkajs/src/utils/long.js';
const TIMESTAMP_TYPES_MODULE = 'kafkajs/src/protocol/timestampTypes.js';

/** The part of kafkajs's Decoder (src/protocol/decoder.js) a record is read with. */
export interface RecordDecoder {
  buffer: Buffer;
  offset: number;
  readInt8(): number;
  readVarInt(): number;
  readVarLong(): { toString(): string };
}

interface LongLike {
  add(other: unknown): { toString(): string };
}
type LongClass = { fromValue(value: unknown): LongLike };

export interface BatchContext {
  firstOffset?: string;
  firstTimestamp?: string;
  magicByte?: number;
  isControlBatch?: boolean;
  timestampType?: number;
  maxTimestamp?: string;
}

type HeaderValue = Buffer | null;

/** The replacement for kafkajs's record reader: (decoder, batchContext) → the record kafkajs would give. */
export function recordReader(): (decoder: RecordDecoder, batchContext?: BatchContext) => unknown {
  const Long = require(LONG_MODULE) as LongClass;
  const { LOG_APPEND_TIME } = require(TIMESTAMP_TYPES_MODULE) as { LOG_APPEND_TIME: number };
  return (decoder, batchContext = {}) => {
    const { firstOffset, firstTimestamp, magicByte, isControlBatch = false, timestampType, maxTimestamp } = batchContext;
    const attributes = decoder.readInt8();
    const timestampDelta = decoder.readVarLong();
    const timestamp = timestampType === LOG_APPEND_TIME && maxTimestamp ? maxTimestamp : Long.fromValue(firstTimestamp).add(timestampDelta).toString();
    const offsetDelta = decoder.readVarInt();
    const offset = Long.fromValue(firstOffset).add(offsetDelta).toString();
    const key = readBytes(decoder, 'key');
    const value = readBytes(decoder, 'value');
    const count = decoder.readVarInt();
    const headers: Record<string, HeaderValue | HeaderValue[]> = {};
    if (count !== -1) {
      // Each header takes two bytes at least (two lengths); past the record's end kafkajs reads zeros, so none.
      const left = Math.max(0, decoder.buffer.length - decoder.offset);
      if (count < -1 || count > left / 2) throw new RangeError(`a record's header count of ${count}, with ${left} bytes left`);
      const inBatch = (headersOfBatch.get(batchContext) ?? 0) + count;
      if (inBatch > MAX_HEADERS_PER_BATCH) throw new RangeError(`a batch of ${inBatch} headers or more, over the ${MAX_HEADERS_PER_BATCH} read at once`);
      headersOfBatch.set(batchContext, inBatch);
      for (let i = 0; i < count; i++) {
        const name = String(readString(decoder));
        const headerValue = readBytes(decoder, 'header value');
        if (!Object.hasOwn(headers, name)) Object.defineProperty(headers, name, { value: headerValue, writable: true, enumerable: true, configurable: true });
        else {
          const seen = headers[name]!;
          if (Array.isArray(seen)) seen.push(headerValue);
          else headers[name] = [seen, headerValue];
        }
      }
    }
    return { magicByte, attributes, timestamp, offset, key, value, headers, isControlRecord: isControlBatch, batchContext };
  };
}

/** A length, -1 for null, refused below -1 (a longer one is cut at the record's end, as kafkajs does). */
function lengthOf(decoder: RecordDecoder, what: string): number {
  const length = decoder.readVarInt();
  if (length < -1) throw new RangeError(`a record's ${what} of ${length} bytes`);
  return length;
}

function readBytes(decoder: RecordDecoder, what: string): Buffer | null {
  const length = lengthOf(decoder, what);
  if (length === -1) return null;
  const bytes = decoder.buffer.slice(decoder.offset, decoder.offset + length);
  decoder.offset += length;
  return bytes;
}

function readString(decoder: RecordDecoder): string | null {
  const bytes = readBytes(decoder, 'header key');
  if (bytes !== null && bytes.length > MAX_HEADER_NAME_BYTES) throw new RangeError(`a record's header key of ${bytes.length} bytes, over the ${MAX_HEADER_NAME_BYTES} read`);
  return bytes === null ? null : bytes.toString('utf8');
}
