import { createRequire } from 'node:module';
import { unzip } from 'node:zlib';
import { BanstreamError } from '@banstream/core';

/**
 * kafkajs 2.2.4 reads a record batch whole or fails the fetch it came in:
 * - it has no Snappy, LZ4 or ZSTD codec, and the error it raises (KafkaJSNotImplemented)
 *   is one it does not retry: the consumer is given up on;
 * - it gunzips a gzip batch with no bound: one batch the broker takes (1 MiB) can be
 *   about a GiB once decompressed.
 * So any producer allowed to write a topic could stop its readers, or exhaust their
 * memory, with one batch, met again after every restart (docs/security.md, section 4).
 *
 * With this fix a batch that cannot be read, for any reason but being cut at the end of
 * a fetch, is read as one stand-in record at the batch's last offset, with no key and no
 * value: the consumer moves past it, and its handler learns from unreadableBatch() why
 * (a dead letter, a count). Gzip is decompressed up to MAX_DECOMPRESSED_BATCH_BYTES.
 *
 * kafkajs takes the batch reader when a fetch response is first decoded (fetch/v4/
 * decodeMessages.js requires it at the top), so the wrapper must be in its module cache
 * before: installKafkaPatches() puts it there. Applied once per process.
 */

/**
 * The most a compressed batch may hold once decompressed. banstream's writers send at
 * most 1 MiB per request; the aggregator reads and dead-letters records far larger than
 * that (test/aggregator-stall.test.ts plants one of about 20 MiB); a reader holds one
 * such batch per partition of a fetch at most.
 */
export const MAX_DECOMPRESSED_BATCH_BYTES = 64 << 20;

const require = createRequire(import.meta.url);
const BATCH_READER_MODULE = 'kafkajs/src/protocol/recordBatch/v0/decoder.js';
const FETCH_DECODE_MODULE = 'kafkajs/src/protocol/requests/fetch/v4/decodeMessages.js';
const COMPRESSION_MODULE = 'kafkajs/src/protocol/message/compression/index.js';
const GZIP_MODULE = 'kafkajs/src/protocol/message/compression/gzip.js';

/** The part of kafkajs's Decoder (src/protocol/decoder.js) read here. */
interface KafkajsDecoder {
  buffer: Buffer;
  offset: number;
}

interface KafkajsRecord {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
}

type BatchReader = (decoder: KafkajsDecoder) => Promise<{ records: KafkajsRecord[] }>;

interface Codec {
  compress(encoder: unknown): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

// Offsets in a record batch (Kafka's DefaultRecordBatch), from its first byte.
const LENGTH_AT = 8;
const ATTRIBUTES_AT = 21;
const LAST_OFFSET_DELTA_AT = 23;
const MAX_TIMESTAMP_AT = 35;
const PRODUCER_ID_AT = 43;
/** The batch header, all of it counted by its length field but the first 12 bytes. */
const HEADER_BYTES = 61;
const LENGTH_COUNTS_FROM = 12;
const TIMESTAMP_TYPE_FLAG = 0x08;
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

/** Installs the bounded gzip and the batch reader's wrapper; returns whether the reader is wrapped. */
export function readUnreadableBatchesAsStandIns(): boolean {
  if (applied) return true;
  const compression = require(COMPRESSION_MODULE) as { Codecs?: Record<number, () => Codec>; Types?: { GZIP?: number } };
  const gzip = require(GZIP_MODULE) as Partial<Codec>;
  const GZIP = compression.Types?.GZIP;
  if (compression.Codecs === undefined || GZIP === undefined || typeof gzip.compress !== 'function') return false;
  if (require.cache[require.resolve(FETCH_DECODE_MODULE)] !== undefined) return false;
  require(BATCH_READER_MODULE);
  const module = require.cache[require.resolve(BATCH_READER_MODULE)];
  if (module === undefined || typeof module.exports !== 'function') return false;
  const boundedGzip: Codec = { compress: gzip.compress.bind(gzip), decompress: gunzipBounded };
  compression.Codecs[GZIP] = () => boundedGzip;
  module.exports = standInForUnreadable(module.exports as BatchReader);
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

/** kafkajs's batch reader, with a stand-in record for a whole batch it fails to read. */
export function standInForUnreadable(read: BatchReader): BatchReader {
  return async (decoder) => {
    const start = decoder.offset;
    try {
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
