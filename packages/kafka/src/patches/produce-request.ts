import { crc32c } from './crc32c.js';

/**
 * The body of a Kafka Produce request (versions 3 to 7 share it: KIP-98 record batches,
 * magic 2, no compression), written in one pass into one buffer: the same bytes
 * kafkajs 2.2.4's produce/v3/request.js writes, without its Encoder per record, per
 * batch, per partition and per topic, each copied into the next, and with an 8-byte
 * CRC-32C step. produce-request-fix.ts puts it in front of kafkajs's; a unit test
 * compares the bytes with kafkajs's own for random requests.
 *
 * Anything this does not write exactly as kafkajs would (compression, a key or header
 * that is neither a string nor a Buffer, fractional or negative timestamps, timestamps
 * kafkajs would order as text differently from as numbers, deltas beyond 32 bits) gives
 * undefined: the caller then uses kafkajs's own encoder.
 */

export interface ProduceMessage {
  key?: unknown;
  value?: unknown;
  timestamp?: unknown;
  headers?: unknown;
}

export interface ProducePartitionData {
  partition: number;
  firstSequence?: number;
  messages: readonly ProduceMessage[];
}

export interface ProduceTopicData {
  topic: string;
  partitions: readonly ProducePartitionData[];
}

/** kafkajs's produce request arguments (producerId as its producer reads it: a decimal string). */
export interface ProduceRequestArgs {
  acks: number;
  timeout: number;
  transactionalId?: string | null;
  producerId?: unknown;
  producerEpoch?: number;
  compression?: number;
  topicData: readonly ProduceTopicData[];
}

const NO_COMPRESSION = 0;
const MAGIC = 2;
const TRANSACTIONAL = 0x10;
/** firstOffset, length, partitionLeaderEpoch, magic, crc. */
const BATCH_PREFIX = 8 + 4 + 4 + 1 + 4;
/** attributes, lastOffsetDelta, firstTimestamp, maxTimestamp, producerId, producerEpoch, firstSequence, record count. */
const BATCH_HEADER = 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4;

/** Per record, from the sizing pass to the writing pass: body size, key and value byte lengths (-1: null). */
let scratch = new Int32Array(3 * 1024);

export function encodeProduceRequest(args: ProduceRequestArgs, now: number = Date.now()): Buffer | undefined {
  // As kafkajs: a missing producer id is -1 (a null one is not, and kafkajs fails on it).
  const producerId = int64Of(args.producerId === undefined ? -1 : args.producerId);
  if (producerId === undefined || !argsOnFastPath(args)) return undefined;
  const times: number[] = [];
  let size = 2 + (args.transactionalId == null ? 0 : Buffer.byteLength(args.transactionalId)) + 2 + 4 + 4;
  let records = 0;
  for (const topic of args.topicData) {
    size += 2 + Buffer.byteLength(topic.topic) + 4;
    for (const data of topic.partitions) {
      const span = timestampSpan(data.messages, now);
      if (span === undefined) return undefined;
      times.push(span.first, span.max);
      if (scratch.length < 3 * (records + data.messages.length)) {
        const grown = new Int32Array(2 * 3 * (records + data.messages.length));
        grown.set(scratch);
        scratch = grown;
      }
      let batch = BATCH_HEADER;
      for (let i = 0; i < data.messages.length; i++) {
        const m = data.messages[i]!;
        const delta = timestampOf(m, now) - span.first;
        if (!isInt32(delta)) return undefined;
        const keyLength = bytesLength(m.key);
        const valueLength = bytesLength(m.value);
        const headers = headersSize(m.headers);
        if (keyLength === undefined || valueLength === undefined || headers === undefined) return undefined;
        const body = 1 + varIntSize(delta) + varIntSize(i) + varIntBytesSize(keyLength) + varIntBytesSize(valueLength) + headers;
        scratch[3 * records] = body;
        scratch[3 * records + 1] = keyLength;
        scratch[3 * records + 2] = valueLength;
        records++;
        batch += varIntSize(body) + body;
      }
      size += 4 + 4 + BATCH_PREFIX + batch;
    }
  }

  const w = new Writer(Buffer.allocUnsafe(size));
  w.nullableString(args.transactionalId ?? null);
  w.int16(args.acks);
  w.int32(args.timeout);
  w.int32(args.topicData.length);
  const attributes = args.transactionalId ? TRANSACTIONAL : 0;
  let record = 0;
  let span = 0;
  for (const topic of args.topicData) {
    w.nullableString(topic.topic);
    w.int32(topic.partitions.length);
    for (const data of topic.partitions) {
      const first = times[span++]!;
      const max = times[span++]!;
      w.int32(data.partition);
      const recordSetAt = w.at;
      w.at += 4; // record set size, known at the end
      w.int64(0n); // firstOffset
      const lengthAt = w.at;
      w.at += 4;
      w.int32(0); // partitionLeaderEpoch
      w.int8(MAGIC);
      const crcAt = w.at;
      w.at += 4;
      w.int16(attributes);
      w.int32(data.messages.length - 1); // lastOffsetDelta
      w.timestamp(first);
      w.timestamp(max);
      w.int64(producerId);
      w.int16(args.producerEpoch ?? 0);
      w.int32(data.firstSequence ?? 0);
      w.int32(data.messages.length);
      for (let i = 0; i < data.messages.length; i++, record++) {
        const m = data.messages[i]!;
        w.varInt(scratch[3 * record]!);
        w.int8(0); // record attributes
        w.varInt(timestampOf(m, now) - first);
        w.varInt(i);
        w.varIntBytes(m.key, scratch[3 * record + 1]!);
        w.varIntBytes(m.value, scratch[3 * record + 2]!);
        w.headers(m.headers);
      }
      const end = w.at;
      w.buf.writeInt32BE(end - recordSetAt - 4, recordSetAt);
      w.buf.writeInt32BE(end - lengthAt - 4, lengthAt);
      w.buf.writeUInt32BE(crc32c(w.buf, crcAt + 4, end), crcAt);
    }
  }
  if (w.at !== size) throw new Error(`produce request: wrote ${w.at} bytes, sized ${size}`);
  return w.buf;
}

function argsOnFastPath(args: ProduceRequestArgs): boolean {
  return (
    (args.compression === undefined || args.compression === NO_COMPRESSION) &&
    (args.transactionalId == null || typeof args.transactionalId === 'string') &&
    isIntIn(args.acks, -0x8000, 0x7fff) &&
    isInt32(args.timeout) &&
    (args.producerEpoch === undefined || isIntIn(args.producerEpoch, -0x8000, 0x7fff)) &&
    args.topicData.every((t) => typeof t.topic === 'string' && t.partitions.every((p) => isInt32(p.partition) && (p.firstSequence === undefined || isInt32(p.firstSequence)) && p.messages.length > 0))
  );
}

/**
 * kafkajs's firstTimestamp and maxTimestamp: the first and last of the messages' own
 * timestamps sorted as JavaScript's default sort does (as text), or now when none has
 * one. For non-negative integers written alike (numbers, or decimal strings as kafkajs's
 * types have them) of one length, that order is the numeric one.
 */
function timestampSpan(messages: readonly ProduceMessage[], now: number): { first: number; max: number } | undefined {
  let min = Infinity;
  let max = -Infinity;
  for (const m of messages) {
    const t = m.timestamp;
    if (t == null) continue;
    let value: number;
    if (typeof t === 'number' && Number.isSafeInteger(t) && t >= 0) value = t;
    else if (typeof t === 'string' && DECIMAL.test(t)) value = Number(t);
    else return undefined;
    if (value < min) min = value;
    if (value > max) max = value;
  }
  if (min === Infinity) return { first: now, max: now };
  return String(min).length === String(max).length ? { first: min, max } : undefined;
}

/** A non-negative safe integer as String(number) writes it. */
const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;

/** As kafkajs's `message.timestamp || now`: a missing timestamp, or the number 0, is the request's now. */
function timestampOf(m: ProduceMessage, now: number): number {
  const t = m.timestamp;
  return typeof t === 'string' ? Number(t) : (t as number) || now;
}

function bytesLength(value: unknown): number | undefined {
  if (value == null) return -1;
  if (Buffer.isBuffer(value)) return value.length;
  if (typeof value === 'string') return Buffer.byteLength(value);
  return undefined;
}

function headersSize(headers: unknown): number | undefined {
  if (headers === undefined) return 1;
  if (headers === null || typeof headers !== 'object' || Buffer.isBuffer(headers)) return undefined;
  let count = 0;
  let size = 0;
  for (const key of Object.keys(headers)) {
    const values = (headers as Record<string, unknown>)[key];
    const keyLength = Buffer.byteLength(key);
    for (const value of Array.isArray(values) ? values : [values]) {
      const valueLength = bytesLength(value);
      if (valueLength === undefined || valueLength < 0) return undefined; // kafkajs throws on a null header value
      count++;
      size += varIntBytesSize(keyLength) + varIntBytesSize(valueLength);
    }
  }
  return varIntSize(count) + size;
}

function varIntBytesSize(length: number): number {
  return length < 0 ? 1 : varIntSize(length) + length;
}

/** Bytes of the zigzag varint of a 32-bit integer. */
function varIntSize(value: number): number {
  const z = ((value << 1) ^ (value >> 31)) >>> 0;
  return z < 0x80 ? 1 : z < 0x4000 ? 2 : z < 0x200000 ? 3 : z < 0x10000000 ? 4 : 5;
}

/** As kafkajs's Long.fromValue, for the forms it gets: a number, a decimal string (how kafkajs reads a producer id), a BigInt or a Long. */
function int64Of(value: unknown): bigint | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : undefined;
  if (typeof value === 'string') return /^-?[0-9]{1,20}$/.test(value) ? BigInt.asIntN(64, BigInt(value)) : undefined;
  if (typeof value === 'bigint') return BigInt.asIntN(64, value);
  const long = (value as { value?: unknown } | null)?.value;
  return typeof long === 'bigint' ? BigInt.asIntN(64, long) : undefined;
}

function isInt32(value: unknown): value is number {
  return isIntIn(value, -0x80000000, 0x7fffffff);
}

function isIntIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

class Writer {
  at = 0;
  constructor(readonly buf: Buffer) {}

  int8(value: number): void {
    this.buf[this.at++] = value;
  }

  int16(value: number): void {
    this.buf.writeInt16BE(value, this.at);
    this.at += 2;
  }

  int32(value: number): void {
    this.buf.writeInt32BE(value, this.at);
    this.at += 4;
  }

  int64(value: bigint): void {
    this.buf.writeBigInt64BE(value, this.at);
    this.at += 8;
  }

  /** A non-negative safe integer as int64, without a BigInt. */
  timestamp(value: number): void {
    this.buf.writeUInt32BE(Math.floor(value / 0x100000000), this.at);
    this.buf.writeUInt32BE(value >>> 0, this.at + 4);
    this.at += 8;
  }

  nullableString(value: string | null): void {
    if (value === null) return this.int16(-1);
    const length = this.buf.write(value, this.at + 2);
    this.int16(length);
    this.at += length;
  }

  /** Zigzag varint, low 7 bits first. */
  varInt(value: number): void {
    let z = (value << 1) ^ (value >> 31);
    const buf = this.buf;
    while ((z & 0xffffff80) !== 0) {
      buf[this.at++] = (z & 0x7f) | 0x80;
      z >>>= 7;
    }
    buf[this.at++] = z;
  }

  /** A varint length (-1 for null) and the bytes; `length` from the sizing pass. */
  varIntBytes(value: unknown, length: number): void {
    this.varInt(length);
    if (length <= 0) return;
    if (typeof value === 'string') this.buf.write(value, this.at);
    else if (length < 64) {
      const from = value as Buffer;
      for (let i = 0; i < length; i++) this.buf[this.at + i] = from[i]!;
    } else (value as Buffer).copy(this.buf, this.at);
    this.at += length;
  }

  headers(headers: unknown): void {
    if (headers === undefined) return this.varInt(0);
    const entries: [string, string | Buffer][] = [];
    for (const key of Object.keys(headers as object)) {
      const values = (headers as Record<string, string | Buffer | (string | Buffer)[]>)[key]!;
      for (const value of Array.isArray(values) ? values : [values]) entries.push([key, value]);
    }
    this.varInt(entries.length);
    for (const [key, value] of entries) {
      this.varIntBytes(key, Buffer.byteLength(key));
      this.varIntBytes(value, bytesLength(value)!);
    }
  }
}
