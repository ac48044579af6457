import { createRequire } from 'node:module';
import { unzip } from 'node:zlib';
import { BanstreamError } from '@banstream/core';
import { recordReader } from './record-reader.js';

/**
 * kafkajs 2.2.4 reads a record batch whole or fails the fetch it came in:
 * - it has no Snappy, LZ4 or ZSTD codec, and the error it raises (KafkaJSNotImplemented)
 *   is one it does not retry: the consumer is given up on;
 * - it gunzips a gzip batch with no bound: one batch the broker takes (1 MiB) can be
 *   about a GiB once decompressed, and a fetch holds as many batches as fit its bytes;
 * - it appends a batch's records with `push(...records)`: a gzip batch of some 124,000
 *   empty records (170 KB written) overflows the stack (a RangeError, not retried).
 * So any producer allowed to write a topic could stop its readers, or exhaust their
 * memory, with one batch, met again after every restart (docs/security.md, section 4).
 *
 * This replaces kafkajs's decoding of a partition's records in a fetch response
 * (fetch/v4/decodeMessages.js, used by Fetch v4 to v11) with the same reading, except:
 * - a batch that cannot be read, for any reason but being cut at the end of the fetch,
 *   or that holds more than MAX_RECORDS_PER_BATCH records, is read as one stand-in
 *   record at the batch's last offset, with no key and no value: the consumer moves
 *   past it, and its handler learns from unreadableBatch() why (a dead letter);
 * - gzip is decompressed up to MAX_DECOMPRESSED_BATCH_BYTES a batch;
 * - once the batches read hold that many bytes (keys, values, headers, and 64 bytes per
 *   record and per header for their objects), the rest of the partition's response is
 *   left, as kafkajs leaves a cut batch: the consumer fetches it next, from where it is;
 * - each record is read by record-reader.ts: lengths and counts no broker writes, too
 *   many headers in a batch and overlong header names are refused (the batch is then a
 *   stand-in) rather than read backwards, allocated for or gathered in quadratic time;
 * - a fetch in the message format before record batches (magic 0 or 1, which Kafka 4
 *   does not write) is refused with an error: kafkajs's reader of it loops on negative
 *   lengths until the heap is gone (22 bytes were enough).
 * kafkajs's Fetch responses take decodeMessages when they are first loaded (at a
 * consumer's first fetch), so installKafkaPatches() must run before. Applied once per process.
 */

/**
 * The most one compressed batch may hold once decompressed, and the bytes of records a
 * partition's part of one fetch response is read up to (one more batch may pass it).
 * banstream's writers send at most 1 MiB per request; the aggregator reads and
 * dead-letters single records far larger (test/aggregator-stall.test.ts plants one of
 * 28 MB). A reader thus holds at most about twice this per partition of a fetch, and
 * one batch's record and header objects (each at most MAX_RECORDS_PER_BATCH and
 * MAX_HEADERS_PER_BATCH) beside.
 */
export const MAX_DECOMPRESSED_BATCH_BYTES = 32 << 20;

/** More records than an uncompressed batch within Kafka's default 1 MiB can hold (about 116,000). */
export const MAX_RECORDS_PER_BATCH = 131_072;

const require = createRequire(import.meta.url);
const BATCH_READER_MODULE = 'kafkajs/src/protocol/recordBatch/v0/decoder.js';
/** kafkajs's reading of a partition's records in a Fetch response, which this patch replaces. */
export const FETCH_DECODE_MODULE = 'kafkajs/src/protocol/requests/fetch/v4/decodeMessages.js';
const DECODER_MODULE = 'kafkajs/src/protocol/decoder.js';
/** The Fetch responses that take decodeMessages when loaded. */
const FETCH_RESPONSE_MODULES = [4, 5, 6, 7, 8, 9, 10, 11].map((v) => `kafkajs/src/protocol/requests/fetch/v${v}/response.js`);
const COMPRESSION_MODULE = 'kafkajs/src/protocol/message/compression/index.js';
const GZIP_MODULE = 'kafkajs/src/protocol/message/compression/gzip.js';
/** A record's reader, which the batch reader takes when it is first loaded (record-reader.ts). */
const RECORD_READER_MODULE = 'kafkajs/src/protocol/recordBatch/record/v0/decoder.js';
/** The modules a fetch's records are read with, past decodeMessages: kafkajs's own reading is these, loaded afresh. */
export const FETCH_READING_CHAIN = [BATCH_READER_MODULE, RECORD_READER_MODULE] as const;

/** The part of kafkajs's Decoder (src/protocol/decoder.js) read here. */
export interface KafkajsDecoder {
  buffer: Buffer;
  offset: number;
  readInt32(): number;
  readBytes(length: number): Buffer;
  canReadBytes(length: number): boolean;
}
type DecoderClass = new (buffer: Buffer) => KafkajsDecoder;

/** A record as kafkajs reads it (the fields read here; `timestamp`, `headers` and the rest beside). */
export interface KafkajsRecord {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  timestamp?: string;
  headers?: unknown;
}

/** decodeMessages: a partition's part of a Fetch response (an int32 size, then its batches) → its records. */
export type DecodeMessages = (decoder: KafkajsDecoder) => Promise<KafkajsRecord[]>;

type BatchReader = (decoder: KafkajsDecoder) => Promise<{ records: KafkajsRecord[] }>;

interface Codec {
  compress(encoder: unknown): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

// Offsets in a record batch (Kafka's DefaultRecordBatch), from its first byte.
const LENGTH_AT = 8;
const MAGIC_AT = 16;
const RECORDS_COUNT_AT = 57;
const ATTRIBUTES_AT = 21;
const LAST_OFFSET_DELTA_AT = 23;
const MAX_TIMESTAMP_AT = 35;
const PRODUCER_ID_AT = 43;
/** The batch header, all of it counted by its length field but the first 12 bytes. */
const HEADER_BYTES = 61;
const LENGTH_COUNTS_FROM = 12;
const TIMESTAMP_TYPE_FLAG = 0x08;
const BATCH_MAGIC = 2;
/** What kafkajs requires to be left before it reads another batch. */
const RECORD_BATCH_OVERHEAD = 49;
const TRANSACTIONAL_FLAG = 0x10;
const CONTROL_FLAG = 0x20;

/** A stand-in record: it is at the batch's last offset and stands for all of them. */
export interface UnreadableBatch {
  /** The batch's first offset: a reader expecting any offset from here to the stand-in's own has it. */
  firstOffset: string;
  /** Why it could not be read, its offsets named (KAFKA_BATCH_UNREADABLE). */
  error: BanstreamError;
}

/** Stand-in record → its batch. Only this module makes them. */
const standIns = new WeakMap<object, UnreadableBatch>();

/**
 * The batch `message` stands for, when it is a stand-in for one that could not be
 * read; undefined for every record read as written. Not forgeable by a producer: only
 * the stand-ins this module made are known.
 */
export function unreadableBatch(message: object): UnreadableBatch | undefined {
  return standIns.get(message);
}

let applied = false;

/** Installs the bounded gzip and the fetch decoding above; returns whether it is installed. */
export function readUnreadableBatchesAsStandIns(): boolean {
  if (applied) return true;
  if ([...FETCH_RESPONSE_MODULES, BATCH_READER_MODULE].some((m) => require.cache[require.resolve(m)] !== undefined)) return false;
  const compression = require(COMPRESSION_MODULE) as { Codecs?: Record<number, () => Codec>; Types?: { GZIP?: number } };
  const gzip = require(GZIP_MODULE) as Partial<Codec>;
  const GZIP = compression.Types?.GZIP;
  if (compression.Codecs === undefined || GZIP === undefined || typeof gzip.compress !== 'function') return false;
  // Before the batch reader is loaded: it takes the record reader then.
  require(RECORD_READER_MODULE);
  const recordModule = require.cache[require.resolve(RECORD_READER_MODULE)];
  if (recordModule === undefined || typeof recordModule.exports !== 'function') return false;
  recordModule.exports = recordReader();
  const readBatch = require(BATCH_READER_MODULE) as unknown;
  const Decoder = require(DECODER_MODULE) as unknown;
  require(FETCH_DECODE_MODULE);
  const module = require.cache[require.resolve(FETCH_DECODE_MODULE)];
  if (module === undefined || typeof module.exports !== 'function' || typeof readBatch !== 'function' || typeof Decoder !== 'function') return false;
  const boundedGzip: Codec = { compress: gzip.compress.bind(gzip), decompress: gunzipBounded };
  compression.Codecs[GZIP] = () => boundedGzip;
  module.exports = decodeMessagesBounded(standInForUnreadable(readBatch as BatchReader), Decoder as DecoderClass);
  applied = true;
  return true;
}

export function unreadableBatchesFixed(): boolean {
  return applied;
}

/** Gzip (or zlib) as kafkajs decompresses it, refused past MAX_DECOMPRESSED_BATCH_BYTES. */
export function gunzipBounded(buffer: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    unzip(buffer, { maxOutputLength: MAX_DECOMPRESSED_BATCH_BYTES }, (error, result) => {
      if (error === null) resolve(result);
      else if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') reject(new Error(`gzip batch larger than ${MAX_DECOMPRESSED_BATCH_BYTES >> 20} MiB once decompressed`));
      else reject(error);
    });
  });
}

/**
 * kafkajs's decodeMessages (fetch/v4/decodeMessages.js), reading batches with `readBatch`,
 * appending records one by one, and leaving the rest of the partition's response once
 * the records read hold MAX_DECOMPRESSED_BATCH_BYTES.
 */
export function decodeMessagesBounded(readBatch: BatchReader, Decoder: DecoderClass) {
  return async (decoder: KafkajsDecoder): Promise<unknown[]> => {
    const size = decoder.readInt32();
    if (size <= 0 || !decoder.canReadBytes(size)) return [];
    const bytes = decoder.readBytes(size);
    const messages = new Decoder(bytes);
    // No batch or message whole in so few bytes: the cut tail of a fetch (kafkajs threw a RangeError).
    if (bytes.length <= MAGIC_AT) return [];
    const magic = bytes.readInt8(MAGIC_AT);
    // Kafka 4 writes no other format; kafkajs's reader of the old one (magic 0 and 1) loops on negative lengths until its heap is gone.
    if (magic !== BATCH_MAGIC) throw new BanstreamError('KAFKA_BATCH_UNREADABLE', `a fetch of records in the message format of magic ${magic}, which Kafka 4 does not write: not read`);
    const records: KafkajsRecord[] = [];
    let held = 0;
    while (messages.canReadBytes(RECORD_BATCH_OVERHEAD) && held < MAX_DECOMPRESSED_BATCH_BYTES) {
      let batch: { records: KafkajsRecord[] };
      try {
        batch = await readBatch(messages);
      } catch (error) {
        // The tail of a fetch may be a cut batch (maxBytes): kafkajs fetches it next.
        if ((error as { name?: unknown } | null)?.name === 'KafkaJSPartialMessageError') break;
        throw error;
      }
      for (const record of batch.records) {
        records.push(record);
        held += bytesHeld(record);
      }
    }
    return records;
  };
}

/** Bytes a read record holds, counted toward a partition's budget: its key, value and headers, and its objects (64 bytes each). */
export function bytesHeld(record: { key: Buffer | null; value: Buffer | null; headers?: unknown }): number {
  let held = 64 + (record.value?.length ?? 0) + (record.key?.length ?? 0);
  const headers = record.headers as Record<string, Buffer | null | (Buffer | null)[]> | undefined;
  if (headers) {
    for (const name in headers) {
      if (!Object.hasOwn(headers, name)) continue;
      const value = headers[name];
      for (const one of Array.isArray(value) ? value : [value]) held += 64 + name.length + (one?.length ?? 0);
    }
  }
  return held;
}

/** kafkajs's batch reader, with a stand-in record for a whole batch it fails to read. */
export function standInForUnreadable(read: BatchReader): BatchReader {
  return async (decoder) => {
    const start = decoder.offset;
    try {
      const { buffer } = decoder;
      // Counted before any is read: only a whole batch (a cut one is fetched again).
      if (start + HEADER_BYTES <= buffer.length && start + LENGTH_COUNTS_FROM + buffer.readInt32BE(start + LENGTH_AT) <= buffer.length) {
        const count = buffer.readInt32BE(start + RECORDS_COUNT_AT);
        if (count > MAX_RECORDS_PER_BATCH) throw new Error(`a batch of ${count} records, over the ${MAX_RECORDS_PER_BATCH} read at once`);
      }
      return await read(decoder);
    } catch (error) {
      // A batch cut by the fetch's byte limit: kafkajs stops there and fetches it again.
      if ((error as { name?: unknown } | null)?.name === 'KafkaJSPartialMessageError') throw error;
      const standIn = standInRecord(decoder.buffer, start, error);
      if (standIn === undefined) throw error;
      decoder.offset = start + LENGTH_COUNTS_FROM + decoder.buffer.readInt32BE(start + LENGTH_AT);
      return { records: [standIn] };
    }
  };
}

/** The stand-in for the batch at `start`, or undefined when its header does not delimit a whole batch in `buffer`. */
function standInRecord(buffer: Buffer, start: number, error: unknown): KafkajsRecord | undefined {
  if (start + HEADER_BYTES > buffer.length) return undefined;
  const length = buffer.readInt32BE(start + LENGTH_AT);
  if (length < HEADER_BYTES - LENGTH_COUNTS_FROM || start + LENGTH_COUNTS_FROM + length > buffer.length) return undefined;
  const firstOffset = buffer.readBigInt64BE(start);
  const lastOffset = firstOffset + BigInt(Math.max(0, buffer.readInt32BE(start + LAST_OFFSET_DELTA_AT)));
  const attributes = buffer.readInt16BE(start + ATTRIBUTES_AT);
  const producerId = buffer.readBigInt64BE(start + PRODUCER_ID_AT).toString();
  const maxTimestamp = buffer.readBigInt64BE(start + MAX_TIMESTAMP_AT).toString();
  const inTransaction = (attributes & TRANSACTIONAL_FLAG) !== 0;
  const isControlBatch = (attributes & CONTROL_FLAG) !== 0;
  const cause = error instanceof Error ? (error.name === 'Error' ? error.message : `${error.name}: ${error.message}`) : String(error);
  const record = {
    magicByte: 2,
    attributes: 0,
    timestamp: maxTimestamp,
    offset: lastOffset.toString(),
    key: null,
    value: null,
    headers: {},
    isControlRecord: isControlBatch,
    batchContext: { firstOffset: firstOffset.toString(), maxTimestamp, producerId, inTransaction, isControlBatch, timestampType: (attributes & TIMESTAMP_TYPE_FLAG) === 0 ? 0 : 1 },
  };
  const range = firstOffset === lastOffset ? `offset ${firstOffset}` : `offsets ${firstOffset} to ${lastOffset}`;
  const reason = new BanstreamError('KAFKA_BATCH_UNREADABLE', `record batch at ${range} skipped unread: ${cause}`, { cause: error });
  standIns.set(record, { firstOffset: firstOffset.toString(), error: reason });
  return record;
}
