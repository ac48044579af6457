import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { MAX_HEADER_NAME_BYTES, MAX_HEADERS_PER_BATCH } from './record-reader.js';
import { bytesHeld, FETCH_DECODE_MODULE, FETCH_READING_CHAIN, readUnreadableBatchesAsStandIns, unreadableBatch, type KafkajsDecoder } from './unreadable-batches.js';
import { partitionPart } from './kafkajs-own.js';
import { freshKafkajsModule } from '../../../../test/support/kafkajs-module.js';

/** decodeMessages, its records' headers as an object (unreadable-batches.ts's DecodeMessages leaves them unknown). */
type DecodeMessages = (decoder: KafkajsDecoder) => Promise<{ offset: string; headers: Record<string, unknown> }[]>;

expect(readUnreadableBatchesAsStandIns()).toBe(true);
const decodeMessages = createRequire(import.meta.url)(FETCH_DECODE_MODULE) as DecodeMessages;
const kafkajsDecodeMessages = freshKafkajsModule<DecodeMessages>(FETCH_DECODE_MODULE, FETCH_READING_CHAIN);

/** Kafka's zigzag varint. */
function varint(n: number): number[] {
  let z = n >= 0 ? n * 2 : -n * 2 - 1;
  const out: number[] = [];
  while (z >= 0x80) {
    out.push((z % 0x80) | 0x80);
    z = Math.floor(z / 0x80);
  }
  out.push(z);
  return out;
}

/** One uncompressed batch of one record: no key, no value, then the header bytes given (count first), as a fetch carries it. */
function fetchOfOneRecord(headers: number[]): KafkajsDecoder {
  const body = [0, 0, 0, ...varint(-1), ...varint(-1), ...headers];
  const records = Buffer.from([...varint(body.length), ...body]);
  const header = Buffer.alloc(61);
  header.writeInt32BE(61 - 12 + records.length, 8);
  header.writeInt8(2, 16);
  header.writeBigInt64BE(1_700_000_000_000n, 27);
  header.writeBigInt64BE(1_700_000_000_000n, 35);
  header.writeBigInt64BE(-1n, 43);
  header.writeInt32BE(1, 57);
  return partitionPart(Buffer.concat([header, records]));
}

const header = (key: string, value: string) => [...varint(key.length), ...Buffer.from(key), ...varint(value.length), ...Buffer.from(value)];

describe("a record's headers", () => {
  it('are read as kafkajs reads them, a repeated name as a list of its values', async () => {
    const bytes = [...varint(4), ...header('a', '1'), ...header('b', '2'), ...header('a', '3'), ...header('a', '4')];
    const [ours] = await decodeMessages(fetchOfOneRecord(bytes));
    const [theirs] = await kafkajsDecodeMessages(fetchOfOneRecord(bytes));
    expect(ours!.headers).toEqual({ a: [Buffer.from('1'), Buffer.from('3'), Buffer.from('4')], b: Buffer.from('2') });
    expect(ours!.headers).toEqual(theirs!.headers);
  });

  it('named like an object property are own values (kafkajs made a repeated `toString` [Function, value])', async () => {
    const bytes = [...varint(3), ...header('toString', 'x'), ...header('toString', 'y'), ...header('__proto__', 'z')];
    const [ours] = await decodeMessages(fetchOfOneRecord(bytes));
    expect(ours!.headers.toString).toEqual([Buffer.from('x'), Buffer.from('y')]);
    expect(Object.getOwnPropertyDescriptor(ours!.headers, '__proto__')?.value).toEqual(Buffer.from('z'));
    expect(Object.getPrototypeOf(ours!.headers)).toBe(Object.prototype);
  });

  it('whose value length is negative (read backwards by kafkajs, the same header again and again) make the batch a stand-in', async () => {
    // One header, 'k' then a value of -3 bytes: kafkajs goes back to the header's start and reads it 1,000 times.
    const bytes = [...varint(1_000), ...varint(1), ...Buffer.from('k'), ...varint(-3)];
    const theirs = await kafkajsDecodeMessages(fetchOfOneRecord(bytes));
    expect((theirs[0]!.headers as { k: unknown[] }).k).toHaveLength(1_000);
    const ours = await decodeMessages(fetchOfOneRecord(bytes));
    expect(ours).toHaveLength(1);
    expect(unreadableBatch(ours[0]!)?.error.message).toBe("record batch at offset 0 skipped unread: RangeError: a record's header count of 1000, with 3 bytes left");
    // Counted as the bytes allow, the negative length itself is refused.
    const [one] = await decodeMessages(fetchOfOneRecord([...varint(1), ...varint(1), ...Buffer.from('k'), ...varint(-3)]));
    expect(unreadableBatch(one!)?.error.message).toBe("record batch at offset 0 skipped unread: RangeError: a record's header value of -3 bytes");
  });

  it('counted past what the bytes left could hold (kafkajs allocates for the count and reads zeros past the end) make the batch a stand-in', async () => {
    const ours = await decodeMessages(fetchOfOneRecord([...varint(2 ** 30), ...header('k', 'v')]));
    expect(unreadableBatch(ours[0]!)?.error.message).toBe("record batch at offset 0 skipped unread: RangeError: a record's header count of 1073741824, with 4 bytes left");
  });

  it('many and distinct are all read (kafkajs gathered them in quadratic time)', async () => {
    const n = 20_000;
    const bytes = [...varint(n)];
    for (let i = 0; i < n; i++) bytes.push(...header(`h${i}`, ''));
    const [ours] = await decodeMessages(fetchOfOneRecord(bytes));
    expect(Object.keys(ours!.headers)).toHaveLength(n);
    expect(ours!.headers.h19999).toEqual(Buffer.alloc(0));
  });
});

describe('what one batch may cost', () => {
  it(`holds at most ${MAX_HEADERS_PER_BATCH.toLocaleString('en')} headers: an empty header takes two bytes, and a 31 KB gzip batch carried 16 million`, async () => {
    const empty = [...varint(0), ...varint(0)];
    const at = [...varint(MAX_HEADERS_PER_BATCH)];
    for (let i = 0; i < MAX_HEADERS_PER_BATCH; i++) at.push(...empty);
    const [read] = await decodeMessages(fetchOfOneRecord(at));
    expect(unreadableBatch(read!)).toBeUndefined();
    expect((read!.headers[''] as unknown[]).length).toBe(MAX_HEADERS_PER_BATCH);
    const over = [...varint(MAX_HEADERS_PER_BATCH + 1), ...at.slice(varint(MAX_HEADERS_PER_BATCH).length), ...empty];
    const [refused] = await decodeMessages(fetchOfOneRecord(over));
    expect(unreadableBatch(refused!)?.error.message).toBe(`record batch at offset 0 skipped unread: RangeError: a batch of 131073 headers or more, over the 131072 read at once`);
  });

  it(`reads header names of at most ${MAX_HEADER_NAME_BYTES} bytes (V8 hashes a longer string by its length alone: gathering them was quadratic again)`, async () => {
    const [read] = await decodeMessages(fetchOfOneRecord([...varint(1), ...header('n'.repeat(MAX_HEADER_NAME_BYTES), 'v')]));
    expect(Object.keys(read!.headers)[0]).toHaveLength(MAX_HEADER_NAME_BYTES);
    const [refused] = await decodeMessages(fetchOfOneRecord([...varint(1), ...header('n'.repeat(MAX_HEADER_NAME_BYTES + 1), 'v')]));
    expect(unreadableBatch(refused!)?.error.message).toBe("record batch at offset 0 skipped unread: RangeError: a record's header key of 16384 bytes, over the 16383 read");
  });

  it("counts a record's headers and objects toward the partition's budget, not only its key and value", () => {
    const headers = { a: Buffer.alloc(100), b: [Buffer.alloc(10), null] };
    expect(bytesHeld({ key: Buffer.alloc(3), value: Buffer.alloc(5), headers })).toBe(64 + 8 + (64 + 1 + 100) + (64 + 1 + 10) + (64 + 1));
  });
});

describe('a fetch in the message format before record batches (magic 0 or 1, which Kafka 4 does not write)', () => {
  it('is refused with an error naming it: kafkajs read 22 such bytes until its heap was gone', async () => {
    // offset 0, size 14, crc, magic 0, attributes 0, a key of -18 bytes and a value of -8: kafkajs's reader goes back to the start, forever.
    const entry = Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 14, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xee, 0xff, 0xff, 0xff, 0xf8]);
    await expect(decodeMessages(partitionPart(entry))).rejects.toThrow('a fetch of records in the message format of magic 0, which Kafka 4 does not write: not read');
  });
});
