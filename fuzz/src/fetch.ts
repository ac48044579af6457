import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { kafkajsOwn, partitionPart } from '../../packages/kafka/dist/patches/kafkajs-own.js';
import { MAX_HEADER_NAME_BYTES } from '../../packages/kafka/dist/patches/record-reader.js';
import {
  FETCH_DECODE_MODULE,
  FETCH_READING_CHAIN,
  readUnreadableBatchesAsStandIns,
  unreadableBatch,
  type DecodeMessages,
  type KafkajsRecord,
} from '../../packages/kafka/dist/patches/unreadable-batches.js';
import type { Probe } from './probe.js';
import type { Rng } from './random.js';
import { KAFKAJS_READER, PATCH_READER } from './tally.js';

/**
 * The Kafka-level reader every banstream consumer runs first: a partition's part of a
 * Fetch response (an int32 size, then record batches), read by banstream's kafkajs patch
 * (packages/kafka/src/patches/unreadable-batches.ts) against kafkajs's own
 * decodeMessages, the reference here. Batches are written by kafkajs's own encoder,
 * plain and gzip, then mutated anywhere. The contract, and its designed differences:
 * - on batches as kafkajs (and a broker) writes them, the patch reads the same records,
 *   every field of them, and no stand-in but past a bound (records or headers in a
 *   batch, a header name's length, gzip);
 * - on mutated bytes, kafkajs reads the batches the patch did not stand in for (those
 *   cut out: what kafkajs does on them is the hazard, up to running until its heap is
 *   gone) to the same records as the patch, and fails where the patch fails (a batch
 *   no header delimits: nothing to skip to);
 * - a fetch in the old message format (magic 0 or 1) is refused by name;
 * - a part of 16 bytes or fewer (no batch's magic byte): kafkajs throws a RangeError,
 *   the patch reads nothing.
 */
export const FETCH = 'kafka fetch (one partition)';

const require = createRequire(import.meta.url);

if (!readUnreadableBatchesAsStandIns()) throw new Error('the unreadable-batches patch could not be installed in the fuzz thread');
const patchDecodeMessages = require(FETCH_DECODE_MODULE) as DecodeMessages;
// kafkajs's own reading, batch and record readers included, loaded afresh beside the patch's.
const kafkajsDecodeMessages = kafkajsOwn<DecodeMessages>(FETCH_DECODE_MODULE, FETCH_READING_CHAIN);

const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as { RecordBatch: (args: Record<string, unknown>) => Promise<{ buffer: Buffer }> };
const Record = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (args: Record<string, unknown>) => unknown;

export interface FetchSpec {
  batches: { gzip: boolean; records: { key: Uint8Array | null; value: Uint8Array | null; headers: Record<string, Uint8Array> }[] }[];
}

const bytes = (max: number) => fc.uint8Array({ maxLength: max });

/** One to four batches of one to six records, plain or gzip, keys, values and headers of any bytes. */
export function fetchSpecArbitrary(): fc.Arbitrary<FetchSpec> {
  // Now and then many headers, or a name at the longest read and one byte past it (record-reader.ts).
  const headers = fc.oneof(
    { weight: 30, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), bytes(8), { maxKeys: 3 }) },
    { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 4 }), bytes(2), { minKeys: 50, maxKeys: 300 }) },
    { weight: 1, arbitrary: fc.constantFrom(MAX_HEADER_NAME_BYTES, MAX_HEADER_NAME_BYTES + 1).map((n) => ({ ['h'.repeat(n)]: new Uint8Array([1]) })) },
  );
  const record = fc.record({ key: fc.option(bytes(20)), value: fc.option(bytes(200)), headers });
  return fc.record({ batches: fc.array(fc.record({ gzip: fc.boolean(), records: fc.array(record, { minLength: 1, maxLength: 6 }) }), { minLength: 1, maxLength: 4 }) });
}

// Offsets in a record batch (Kafka's DefaultRecordBatch) from its first byte.
const HEADER_BYTES = 61;
const LENGTH_AT = 8;
const ATTRIBUTES_AT = 21;
const LAST_OFFSET_DELTA_AT = 23;
const RECORDS_COUNT_AT = 57;

/**
 * The batches one after another as a fetch carries them (offsets following on), where
 * each starts, and each gzip batch as it reads uncompressed (for mutations of the
 * records inside it).
 */
export async function encodeFetch(spec: FetchSpec): Promise<{ record: Buffer; starts: number[]; plains: (Buffer | undefined)[] }> {
  const parts: Buffer[] = [];
  const starts: number[] = [];
  const plains: (Buffer | undefined)[] = [];
  let offset = 0;
  let at = 0;
  for (const b of spec.batches) {
    const records = b.records.map((r, i) =>
      Record({ offsetDelta: i, key: r.key && Buffer.from(r.key), value: r.value && Buffer.from(r.value), headers: Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, Buffer.from(v)])) }),
    );
    const write = async (compression: number) =>
      Buffer.from(
        (await RecordBatch({ compression, firstOffset: BigInt(offset), firstTimestamp: 1_700_000_000_000, maxTimestamp: 1_700_000_000_000, lastOffsetDelta: b.records.length - 1, records })).buffer,
      );
    const batch = await write(b.gzip ? 1 : 0);
    plains.push(b.gzip ? await write(0) : undefined);
    starts.push(at);
    parts.push(batch);
    at += batch.length;
    offset += b.records.length;
  }
  return { record: Buffer.concat(parts), starts, plains };
}

/**
 * A gzip batch whose records were damaged before compression (a flipped byte or a
 * hostile varint among them), compressed again: what a producer writing such records
 * sends, which mutations of the compressed bytes (a broken stream) do not reach.
 */
function damagedInside(plain: Buffer, rng: Rng): Buffer {
  const records = Buffer.from(plain.subarray(HEADER_BYTES));
  if (records.length > 0) {
    const at = rng.below(records.length);
    if (rng.chance(0.5)) records[at]! ^= 1 + rng.below(255);
    else records.set(rng.pick(VARINTS).slice(0, records.length - at), at);
  }
  const compressed = gzipSync(records);
  const header = Buffer.from(plain.subarray(0, HEADER_BYTES));
  header.writeInt32BE(HEADER_BYTES - 12 + compressed.length, LENGTH_AT);
  header.writeInt16BE((header.readInt16BE(ATTRIBUTES_AT) & ~0x07) | 1, ATTRIBUTES_AT);
  return Buffer.concat([header, compressed]);
}

/** Varints a hostile record may carry: huge, -1, negative, overlong. */
const VARINTS = [[0xff, 0xff, 0xff, 0xff, 0x0f], [0x01], [0xfe, 0xff, 0xff, 0xff, 0x0f], [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]];

/** Int32 values a hostile header may carry: zero, negative, one past a bound, huge. */
const INT32S = [0, -1, -61, 1, 48, 49, 131_072, 131_073, 0x7fffffff, -0x80000000];

/** `count` mutations of the batches, anywhere in them, headers included, and now and then of the records inside a gzip batch. */
export function mutateFetch(input: Buffer, batchStarts: readonly number[], rng: Rng, count: number, plains: readonly (Buffer | undefined)[] = []): { bytes: Buffer; applied: string[] } {
  let out = Buffer.from(input);
  const applied: string[] = [];
  let starts = batchStarts;
  let left = count;
  const gzipped = plains.flatMap((p, i) => (p ? [i] : []));
  if (gzipped.length > 0 && rng.chance(0.3)) {
    const i = rng.pick(gzipped);
    out = Buffer.concat([out.subarray(0, starts[i]), damagedInside(plains[i]!, rng), out.subarray(starts[i + 1] ?? out.length)]);
    applied.push('inside-gzip');
    const moved = wholeBatches(out).batches.map((b) => b.start);
    starts = moved.length > 0 ? moved : [0];
    left--;
  }
  for (let m = 0; m < left && out.length > 0; m++) {
    const start = rng.pick(starts);
    const kind = rng.below(8);
    if (kind <= 1) {
      out[rng.below(out.length)]! ^= 1 + rng.below(255);
      applied.push('flip');
    } else if (kind === 2 && start + ATTRIBUTES_AT + 2 <= out.length) {
      // Another codec (2 Snappy, 3 LZ4, 4 ZSTD, 5 to 7 none known), or the transactional and control bits.
      const bits = rng.chance(0.8) ? (out.readInt16BE(start + ATTRIBUTES_AT) & ~0x07) | (rng.below(7) + 1) : out.readInt16BE(start + ATTRIBUTES_AT) ^ (0x10 << rng.below(2));
      out.writeInt16BE((bits << 16) >> 16, start + ATTRIBUTES_AT);
      applied.push('codec');
    } else if (kind === 3) {
      out = out.subarray(0, rng.below(out.length));
      applied.push('cut');
    } else if (kind === 4) {
      const tail = Buffer.alloc(1 + rng.below(80));
      for (let i = 0; i < tail.length; i++) tail[i] = rng.below(256);
      out = Buffer.concat([out, tail]);
      applied.push('extend');
    } else if (kind === 5) {
      const field = rng.pick([LENGTH_AT, LAST_OFFSET_DELTA_AT, RECORDS_COUNT_AT]);
      if (start + field + 4 <= out.length) out.writeInt32BE(rng.pick(INT32S), start + field);
      applied.push(field === LENGTH_AT ? 'length' : field === RECORDS_COUNT_AT ? 'count' : 'offset-delta');
    } else if (kind === 6 && out.length > start + HEADER_BYTES) {
      // A huge or negative varint (a record's length, a key's, a header count) where a record's fields are.
      const at = start + HEADER_BYTES + rng.below(out.length - start - HEADER_BYTES);
      const varint = rng.pick(VARINTS);
      out = Buffer.concat([out.subarray(0, at), Buffer.from(varint), out.subarray(Math.min(out.length, at + varint.length))]);
      applied.push('varint');
    } else {
      // Bytes at a random place removed: the rest shifts under the headers that delimit it.
      const at = rng.below(out.length);
      out = Buffer.concat([out.subarray(0, at), out.subarray(Math.min(out.length, at + 1 + rng.below(16)))]);
      applied.push('shift');
    }
  }
  return { bytes: out, applied };
}

interface Said {
  /** The first offset of the batch the record is in. */
  batch: string | undefined;
  standIn?: string;
  /** Every field of a record read, as JSON. */
  read?: string;
}

/** What a record says, every field of it, as both readers give it; a stand-in is named by its reason. */
function said(r: KafkajsRecord & { batchContext?: { firstOffset?: string } }): Said {
  const standIn = unreadableBatch(r);
  if (standIn) return { batch: standIn.firstOffset, standIn: standIn.error.message };
  return { batch: r.batchContext?.firstOffset, read: JSON.stringify({ ...r, headers: ownHeaders(r.headers) }) };
}

/**
 * Headers as the patch gathers them: kafkajs took an inherited property for an earlier
 * value of a header named `valueOf`, `toString` or `__proto__` (`[Function, value]`,
 * `[Object.prototype, value]`); a designed difference (record-reader.ts), left out of the comparison.
 */
function ownHeaders(headers: unknown): unknown {
  if (typeof headers !== 'object' || headers === null) return headers;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    const own = Array.isArray(value) && (typeof value[0] === 'function' || value[0] === Object.prototype) ? value.slice(1) : value;
    Object.defineProperty(out, name, { value: Array.isArray(own) && own.length === 1 && own !== value ? own[0] : own, enumerable: true });
  }
  return out;
}

/** The whole batches of a partition's part as their headers delimit them, and where the rest (a cut or undelimited tail) begins. */
function wholeBatches(input: Buffer): { batches: { start: number; end: number }[]; rest: number } {
  const batches: { start: number; end: number }[] = [];
  let at = 0;
  while (at + HEADER_BYTES <= input.length) {
    const length = input.readInt32BE(at + LENGTH_AT);
    const end = at + 12 + length;
    if (length < HEADER_BYTES - 12 || end > input.length) break;
    batches.push({ start: at, end });
    at = end;
  }
  return { batches, rest: at };
}

const MAGIC_AT = 16;
/** How a refusal past one of the patch's bounds reads (record-reader.ts, unreadable-batches.ts). */
const BOUNDS = /over the \d+ read|MiB once decompressed/;
const name = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

/** The patch's reading of `input` against kafkajs's (see the contract above); `written` when the bytes are as kafkajs wrote them. */
export async function checkFetch(input: Buffer, written: boolean, probe: Probe): Promise<void> {
  const read = async (bytes: Buffer) => (await patchDecodeMessages(partitionPart(bytes))).map(said);
  const ours = await probe.runAsync(PATCH_READER, () => read(input));
  if (ours.ok) probe.accepted(PATCH_READER);
  if (input.length <= MAGIC_AT) {
    if (!ours.ok || ours.value.length > 0)
      probe.fail(PATCH_READER, 'disagreements', `a part of ${input.length} bytes (no batch in it) read as ${ours.ok ? `${ours.value.length} records` : name(ours.error)}, not as nothing`);
    return;
  }
  if (input.readInt8(MAGIC_AT) !== 2) {
    // The old message format: refused by name (kafkajs's reader of it is the hazard, not run).
    if (ours.ok || !(ours.error instanceof Error) || !ours.error.message.includes('message format of magic'))
      probe.fail(PATCH_READER, 'disagreements', `read a fetch of magic ${input.readInt8(MAGIC_AT)} as ${ours.ok ? `${ours.value.length} records` : name(ours.error)}`);
    return;
  }
  // The batches the patch stands in for, each read alone (batches are read one by one; a
  // stand-in names its batch by offsets, which mutated headers may share).
  const { batches, rest } = wholeBatches(input);
  const refusals: (string | undefined)[] = [];
  for (const b of batches) {
    // Alone, a batch's magic byte would choose the format; after the first, kafkajs reads it without looking.
    const alone = Buffer.from(input.subarray(b.start, b.end));
    alone[MAGIC_AT] = 2;
    try {
      refusals.push((await read(alone)).find((r) => r.standIn !== undefined)?.standIn);
    } catch (error) {
      return probe.fail(PATCH_READER, 'crashes', `failed on a whole batch (${name(error)}): a whole batch is read or stood in for`);
    }
  }
  // Bytes as written are refused only past a designed bound (records, headers, a header name, gzip).
  const unbounded = refusals.find((r) => r !== undefined && !BOUNDS.test(r));
  if (written && unbounded) return probe.fail(PATCH_READER, 'disagreements', `refused a batch kafkajs wrote: ${unbounded}`);
  // kafkajs reads the rest without them: what it does on those is the hazard the patch is
  // for (it fails, reads backwards, allocates for a count, or runs until its heap is gone).
  const kept = Buffer.concat([...batches.filter((_, i) => refusals[i] === undefined).map((b) => input.subarray(b.start, b.end)), input.subarray(rest)]);
  const expected = ours.ok ? ours.value.filter((r) => r.standIn === undefined) : undefined;
  // A later batch's magic byte is its records' `magicByte`: one moved to the front would choose the format instead.
  if (batches.some((b, i) => i > 0 && refusals[i] === undefined && input.readInt8(b.start + MAGIC_AT) !== 2)) return;
  if (kept.length <= MAGIC_AT || kept.readInt8(MAGIC_AT) !== 2) {
    // Nothing kafkajs reads as batches is left: its bytes 16 on are an undelimited tail (which it would read as the old format).
    if (expected && expected.length > 0 && refusals.every((r) => r !== undefined) && rest === input.length)
      probe.fail(PATCH_READER, 'disagreements', `read ${expected.length} records beside its stand-ins where no batch is left`);
    return;
  }
  const theirs = await probe.runAsync(KAFKAJS_READER, async () => (await kafkajsDecodeMessages(partitionPart(kept))).map(said), false);
  if (theirs.ok) probe.accepted(KAFKAJS_READER);
  if (!expected) {
    if (theirs.ok) probe.fail(PATCH_READER, 'crashes', `failed where kafkajs reads: ${name((ours as { error: unknown }).error)}`);
    return;
  }
  if (!theirs.ok) return probe.fail(PATCH_READER, 'disagreements', `read ${expected.length} records where kafkajs failed (${name(theirs.error)})`);
  if (JSON.stringify(expected) !== JSON.stringify(theirs.value))
    probe.fail(PATCH_READER, 'disagreements', `read ${JSON.stringify(expected).slice(0, 400)} where kafkajs read ${JSON.stringify(theirs.value).slice(0, 400)}`);
}
