import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FETCH_DECODE_MODULE as DECODE_MESSAGES,
  FETCH_READING_CHAIN,
  MAX_DECOMPRESSED_BATCH_BYTES,
  MAX_RECORDS_PER_BATCH,
  readUnreadableBatchesAsStandIns,
  unreadableBatch,
  type DecodeMessages,
  type KafkajsRecord,
} from './unreadable-batches.js';
import { partitionPart } from './kafkajs-own.js';
import { freshKafkajsModule } from '../../../../test/support/kafkajs-module.js';

const require = createRequire(import.meta.url);

const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as { RecordBatch: (args: Record<string, unknown>) => Promise<{ buffer: Buffer }> };
const Record = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (args: Record<string, unknown>) => unknown;

const ATTRIBUTES_AT = 21;
const CODEC = { gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;

/** A batch as a fetch response carries it: values at offsets from `firstOffset`, uncompressed unless asked. */
async function batch(firstOffset: number, values: Buffer[], compression = 0): Promise<Buffer> {
  const records = values.map((value, i) => Record({ offsetDelta: i, key: Buffer.from(`k${i}`), value }));
  const encoded = await RecordBatch({ compression, firstOffset: BigInt(firstOffset), lastOffsetDelta: values.length - 1, records });
  return Buffer.from(encoded.buffer);
}

/** `bytes` with its codec bits set to `codec`: what a producer with that codec would send (kafkajs checks no CRC). */
function markedAs(bytes: Buffer, codec: number): Buffer {
  const out = Buffer.from(bytes);
  out.writeInt16BE((out.readInt16BE(ATTRIBUTES_AT) & ~0x07) | codec, ATTRIBUTES_AT);
  return out;
}

// Installed as a service does, before any fetch is decoded: the decodeMessages Fetch responses then take is the patch's.
const installed = readUnreadableBatchesAsStandIns();
const decodeMessages = require(DECODE_MESSAGES) as DecodeMessages;

async function readAll(bytes: Buffer, decode: DecodeMessages = decodeMessages): Promise<{ offset: string; value: string | null; unreadable: string | undefined }[]> {
  return (await decode(partitionPart(bytes))).map((r) => ({ offset: r.offset, value: r.value?.toString('utf8') ?? null, unreadable: unreadableBatch(r)?.error.message }));
}

describe('a record batch kafkajs cannot read', () => {
  it('is installed before any fetch is decoded', () => {
    expect(installed).toBe(true);
    expect(readUnreadableBatchesAsStandIns()).toBe(true);
    expect(decodeMessages).not.toBe(freshKafkajsModule(DECODE_MESSAGES));
  });

  it.each([
    ['Snappy', CODEC.snappy],
    ['LZ4', CODEC.lz4],
    ['ZSTD', CODEC.zstd],
  ])('compressed with %s is read as one stand-in at its last offset, and the batches after it as written', async (name, codec) => {
    const bytes = Buffer.concat([await batch(10, [Buffer.from('a')]), markedAs(await batch(11, [Buffer.from('b'), Buffer.from('c'), Buffer.from('d')]), codec), await batch(14, [Buffer.from('e')])]);
    expect(await readAll(bytes)).toEqual([
      { offset: '10', value: 'a', unreadable: undefined },
      { offset: '13', value: null, unreadable: `record batch at offsets 11 to 13 skipped unread: KafkaJSNotImplemented: ${name} compression not implemented` },
      { offset: '14', value: 'e', unreadable: undefined },
    ]);
  });

  it('in gzip, is read as written up to the bound, and as a stand-in past it (a gzip bomb)', async () => {
    const fits = Buffer.alloc(1 << 20, 'x');
    const bomb = Buffer.alloc(MAX_DECOMPRESSED_BATCH_BYTES + 1);
    const bytes = Buffer.concat([await batch(0, [fits], CODEC.gzip), await batch(1, [bomb], CODEC.gzip), await batch(2, [Buffer.from('after')])]);
    // The bomb is about a thousandth of its size as written: well under a broker's 1 MiB.
    expect(bytes.length).toBeLessThan(MAX_DECOMPRESSED_BATCH_BYTES / 500);
    const records = await readAll(bytes);
    expect(records.map((r) => ({ ...r, value: r.value?.length }))).toEqual([
      { offset: '0', value: fits.length, unreadable: undefined },
      { offset: '1', value: undefined, unreadable: `record batch at offset 1 skipped unread: gzip batch larger than ${MAX_DECOMPRESSED_BATCH_BYTES >> 20} MiB once decompressed` },
      { offset: '2', value: 'after'.length, unreadable: undefined },
    ]);
  }, 30_000);

  it('whose records are not what its header says (a corrupt gzip stream) is a stand-in too', async () => {
    const good = await batch(5, [Buffer.from('x')], CODEC.gzip);
    // The compressed records start after the 61-byte header (12 + 49): gzip's magic is broken.
    const corrupt = Buffer.from(good);
    corrupt[61] = 0;
    corrupt[62] = 0;
    const [standIn] = await readAll(corrupt);
    expect(standIn).toMatchObject({ offset: '5', value: null });
    expect(standIn!.unreadable).toMatch(/^record batch at offset 5 skipped unread: (incorrect header check|unknown compression method)$/);
  });

  it('cut at the end of a fetch is left to kafkajs (it fetches it again), not stood in for', async () => {
    const first = await batch(0, [Buffer.from('a')]);
    const whole = markedAs(await batch(1, [Buffer.from('b')]), CODEC.snappy);
    expect(await readAll(Buffer.concat([first, whole.subarray(0, whole.length - 1)]))).toEqual([{ offset: '0', value: 'a', unreadable: undefined }]);
  });

  it('whose header does not delimit it (a length shorter than a header) fails as before: nothing to skip to', async () => {
    const bytes = markedAs(await batch(0, [Buffer.from('a')]), CODEC.snappy);
    bytes.writeInt32BE(10, 8);
    await expect(readAll(bytes)).rejects.toThrow();
  });

  it('of more records than are read at once (gzip of empty records) is a stand-in; kafkajs itself overflowed its stack', async () => {
    const many = Array.from({ length: MAX_RECORDS_PER_BATCH + 1 }, () => Buffer.alloc(0));
    const bytes = Buffer.concat([await batch(0, many, CODEC.gzip), await batch(MAX_RECORDS_PER_BATCH + 1, [Buffer.from('after')])]);
    expect(bytes.length).toBeLessThan(1 << 20);
    expect(await readAll(bytes)).toEqual([
      {
        offset: String(MAX_RECORDS_PER_BATCH),
        value: null,
        unreadable: `record batch at offsets 0 to ${MAX_RECORDS_PER_BATCH} skipped unread: a batch of ${MAX_RECORDS_PER_BATCH + 1} records, over the ${MAX_RECORDS_PER_BATCH} read at once`,
      },
      { offset: String(MAX_RECORDS_PER_BATCH + 1), value: 'after', unreadable: undefined },
    ]);
    await expect(readAll(bytes, freshKafkajsModule<DecodeMessages>(DECODE_MESSAGES))).rejects.toThrow(RangeError);
  }, 30_000);

  it("leaves the rest of a partition's response once the records read hold the bound: the consumer fetches it next", async () => {
    const third = Buffer.alloc(MAX_DECOMPRESSED_BATCH_BYTES / 3 + 1, 'y');
    const bytes = Buffer.concat([await batch(0, [third], CODEC.gzip), await batch(1, [third], CODEC.gzip), await batch(2, [third], CODEC.gzip), await batch(3, [Buffer.from('next fetch')])]);
    expect((await readAll(bytes)).map((r) => r.offset)).toEqual(['0', '1', '2']);
  }, 30_000);

  it('is known only by the stand-in object: a record a producer wrote with no value is not one', async () => {
    const [plain] = await decodeMessages(partitionPart(await batch(0, [Buffer.alloc(0)])));
    expect(unreadableBatch(plain!)).toBeUndefined();
    expect(unreadableBatch({ offset: '0', key: null, value: null })).toBeUndefined();
  });
});

it('bounded gzip reads what kafkajs writes', async () => {
  const value = gzipSync(Buffer.from('same bytes'));
  const { gunzipBounded } = await import('./unreadable-batches.js');
  expect((await gunzipBounded(value)).toString()).toBe('same bytes');
});

interface Said {
  offset: string;
  /** The first offset of the batch it is in. */
  batch: string | undefined;
  standIn?: string;
}

/** What a record says, as both readers give it; a stand-in is named by its reason. */
function said(r: KafkajsRecord & { timestamp?: string; headers?: unknown; batchContext?: { firstOffset?: string } }): Said {
  const standIn = unreadableBatch(r);
  return standIn
    ? { offset: r.offset, batch: standIn.firstOffset, standIn: standIn.error.message }
    : ({ offset: r.offset, batch: r.batchContext?.firstOffset, key: r.key, value: r.value, timestamp: r.timestamp, headers: r.headers } as Said);
}

describe("the patch's decodeMessages against kafkajs's own (differential, fixed seed)", () => {
  const kafkajsDecodeMessages = freshKafkajsModule<DecodeMessages>(DECODE_MESSAGES, FETCH_READING_CHAIN);
  const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map((a) => Buffer.from(a));
  const batchSpec = fc.record({
    compression: fc.constantFrom(0, CODEC.gzip),
    records: fc.array(fc.record({ key: fc.option(bytes(20)), value: fc.option(bytes(200)), headers: fc.dictionary(fc.string({ maxLength: 8 }), bytes(8), { maxKeys: 3 }) }), {
      minLength: 1,
      maxLength: 6,
    }),
  });
  /** Batches one after another as a fetch carries them, offsets following on. */
  async function written(specs: { compression: number; records: { key: Buffer | null; value: Buffer | null; headers: Record<string, Buffer> }[] }[]): Promise<Buffer> {
    const parts: Buffer[] = [];
    let offset = 0;
    for (const spec of specs) {
      const records = spec.records.map((r, i) => Record({ offsetDelta: i, key: r.key, value: r.value, headers: r.headers }));
      parts.push(
        Buffer.from(
          (
            await RecordBatch({
              compression: spec.compression,
              firstOffset: BigInt(offset),
              firstTimestamp: 1_700_000_000_000,
              maxTimestamp: 1_700_000_000_000,
              lastOffsetDelta: spec.records.length - 1,
              records,
            })
          ).buffer,
        ),
      );
      offset += spec.records.length;
    }
    return Buffer.concat(parts);
  }
  const read = async (decode: DecodeMessages, input: Buffer): Promise<{ records: unknown[] } | { threw: string }> => {
    try {
      return { records: (await decode(partitionPart(input))).map(said) };
    } catch (error) {
      return { threw: (error as Error).name };
    }
  };

  it('reads every batch kafkajs reads to the same records, a cut tail included', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(batchSpec, { minLength: 1, maxLength: 4 }), fc.nat(), async (specs, cutAt) => {
        const whole = await written(specs);
        for (const input of [whole, whole.subarray(0, whole.length - (cutAt % whole.length))]) {
          const theirs = await read(kafkajsDecodeMessages, input);
          // Fewer bytes than a batch's magic byte needs: kafkajs throws a RangeError (a consumer given up on), the patch reads nothing.
          expect(await read(decodeMessages, input)).toEqual(input.length <= 16 ? { records: [] } : theirs);
        }
      }),
      { seed: 20261127, numRuns: 200 },
    );
  });

  it('on a batch mutated anywhere (flipped bytes, other codec bits), agrees with kafkajs where it reads it and says where it fails with a stand-in', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(batchSpec, { minLength: 1, maxLength: 3 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 }),
        fc.constantFrom(undefined, 2, 3, 4, 5, 7),
        async (specs, flips, codec) => {
          const input = await written(specs);
          // Not the first batch's first 61 bytes (its header, which the broker checks and which delimits it).
          for (const [at, xor] of flips) {
            const i = 61 + (at % Math.max(1, input.length - 61));
            if (i < input.length) input[i]! ^= xor;
          }
          if (codec !== undefined) input.writeInt16BE((input.readInt16BE(ATTRIBUTES_AT) & ~0x07) | codec, ATTRIBUTES_AT);
          const theirs = await read(kafkajsDecodeMessages, input);
          const ours = await read(decodeMessages, input);
          if ('records' in theirs) {
            // The same records, but for whole batches the patch refused on lengths or counts no broker writes (record-reader.ts).
            expect('records' in ours).toBe(true);
            const refused = new Set((ours as { records: Said[] }).records.flatMap((r) => (r.standIn ? [r.batch] : [])));
            expect((ours as { records: Said[] }).records.filter((r) => !r.standIn)).toEqual((theirs.records as Said[]).filter((r) => !refused.has(r.batch)));
          } else if (theirs.threw !== 'KafkaJSPartialMessageError' && 'records' in ours) {
            // Where kafkajs failed, the patch says so with a stand-in (offsets are the batches' own: the broker assigns them).
            expect(ours.records.some((r) => 'standIn' in (r as object))).toBe(true);
          }
        },
      ),
      { seed: 20261127, numRuns: 300 },
    );
  });
});
