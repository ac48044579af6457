import { whenGivenUp, type Admin, type Kafka } from '@banstream/kafka';
import type { Logger } from '@banstream/platform';
import { TimeMerge } from './merge.js';

export interface RangeRecord {
  partition: number;
  offset: number;
  /** When the record was written (its Kafka timestamp). */
  timestamp: number;
  value: Buffer | null;
}

export interface RangeReaderOptions {
  kafka: Kafka;
  admin: Admin;
  topic: string;
  groupId: string;
  logger: Logger;
  /** Records written in [from, to). */
  from: number;
  to: number;
  onRecord(record: RangeRecord): void;
  onProgress?(read: number, total: number): void;
  signal?: AbortSignal;
}

/** A partition holding this many unprocessed records is paused until the others catch up. */
const PAUSE_AT = 20_000;
const RESUME_AT = 5_000;

/**
 * Reads the records of `topic` written in [from, to), across partitions in time
 * order (TimeMerge), each partition in offset order. The range's offsets are
 * fixed at the start (by timestamp), so records written meanwhile are not read.
 * Resolves with how many records were read.
 */
export async function readRange(options: RangeReaderOptions): Promise<{ records: number; total: number }> {
  const { kafka, admin, topic, logger } = options;
  const [starts, ends] = await Promise.all([admin.fetchTopicOffsetsByTimestamp(topic, options.from), admin.fetchTopicOffsetsByTimestamp(topic, options.to)]);
  const range = new Map<number, { start: bigint; end: bigint; next: bigint }>();
  for (const s of starts) {
    const end = BigInt(ends.find((e) => e.partition === s.partition)?.offset ?? s.offset);
    if (end > BigInt(s.offset)) range.set(s.partition, { start: BigInt(s.offset), end, next: BigInt(s.offset) });
  }
  let total = 0;
  for (const r of range.values()) total += Number(r.end - r.start);
  if (range.size === 0) return { records: 0, total: 0 };

  const merge = new TimeMerge<RangeRecord>(range.keys());
  const paused = new Set<number>();
  let read = 0;
  const consumer = kafka.consumer({ groupId: options.groupId, maxWaitTimeInMs: 100, maxBytesPerPartition: 4 << 20, sessionTimeout: 30_000 });
  let finish!: () => void;
  let fail!: (e: unknown) => void;
  const finished = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  // Awaited below; marked handled now, as it may fail while the consumer is still joining.
  finished.catch(() => undefined);
  let givenUp: Error | undefined;
  const release = () => {
    for (const record of merge.drain()) {
      options.onRecord(record);
      read++;
    }
    options.onProgress?.(read, total);
    for (const p of paused) {
      if (merge.queuedIn(p) <= RESUME_AT) {
        paused.delete(p);
        consumer.resume([{ topic, partitions: [p] }]);
      }
    }
    if (merge.done) finish();
  };
  // Without this, a consumer kafkajs gives up on (a TypeError in its fetch loop) would hold the backtest for ever.
  whenGivenUp(consumer, (error) => {
    givenUp = error;
    fail(error);
  });
  const onAbort = () => fail(new Error('backtest cancelled'));
  options.signal?.addEventListener('abort', onAbort);
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const r = range.get(batch.partition);
        if (!r) return;
        for (const m of batch.messages) {
          const offset = BigInt(m.offset);
          // Strictly forward: a batch fetched before the seek took effect may repeat offsets.
          if (offset < r.next || offset >= r.end) continue;
          r.next = offset + 1n;
          merge.push(batch.partition, { partition: batch.partition, offset: Number(offset), timestamp: Number(m.timestamp), value: m.value });
        }
        // The last offset of the range may be a control record that is never delivered.
        if (BigInt(batch.lastOffset()) >= r.end - 1n) {
          merge.end(batch.partition);
          range.delete(batch.partition);
        } else if (merge.queuedIn(batch.partition) >= PAUSE_AT) {
          paused.add(batch.partition);
          consumer.pause([{ topic, partitions: [batch.partition] }]);
        }
        release();
      },
    });
    // Given up on while joining: kafkajs has dropped the group, and a seek would fail with a lesser error.
    if (givenUp) throw givenUp;
    for (const [partition, r] of range) consumer.seek({ topic, partition, offset: r.start.toString() });
    await finished;
    return { records: read, total };
  } catch (error) {
    logger.warn({ err: error, topic }, 'reading the backtest range failed');
    throw error;
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    await consumer.disconnect().catch(() => undefined);
    await admin.deleteGroups([options.groupId]).catch(() => undefined);
  }
}
