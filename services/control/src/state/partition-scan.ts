import { randomUUID } from 'node:crypto';
import { whenGivenUp, type Admin, type Kafka } from '@banstream/kafka';

export interface ScanRequest<T> {
  topic: string;
  partition: number;
  /** Records written in [fromMs, toMs) (their Kafka timestamps). */
  fromMs: number;
  toMs: number;
  /** Resume at this offset (a `next` of an earlier page) instead of the offset of fromMs. */
  startOffset?: number | undefined;
  /** Stop once this many records matched. */
  limit: number;
  /** Stop once this many records were read, matching or not: the bound on a hostile query. */
  maxScanned: number;
  /** Stop after this long (ms). */
  budgetMs: number;
  /** The item a record gives, or undefined to skip it; may throw for a record it cannot read (skipped, counted). */
  match(key: Buffer | null, value: Buffer | null, timestamp: number): T | undefined;
}

export interface ScanPage<T> {
  items: T[];
  /** Offset to resume from for the next page; null when the range is read to its end. */
  next: number | null;
  scanned: number;
  /** Records skipped because `match` threw on them. */
  unreadable: number;
}

/**
 * Reads one partition's records written in a time range, from the offset of its start
 * (or a cursor), in offset order, until `limit` matches, `maxScanned` records, the
 * time budget or the range's end: so no query, however wide its range, reads more than
 * a bounded number of records or holds a consumer longer than the budget. Each scan
 * has a consumer group of its own (`groupPrefix` + a random id), deleted afterwards.
 */
export class PartitionScanner {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly kafka: Kafka,
    private readonly admin: Admin,
    private readonly groupPrefix: string,
    /** Scans at once; the next ones wait their turn. */
    private readonly concurrency: number,
  ) {}

  async partitions(topic: string): Promise<number> {
    const metadata = await this.admin.fetchTopicMetadata({ topics: [topic] });
    return metadata.topics[0]?.partitions.length ?? 0;
  }

  async scan<T>(request: ScanRequest<T>): Promise<ScanPage<T>> {
    await this.turn();
    try {
      return await this.run(request);
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  private async turn(): Promise<void> {
    if (this.running < this.concurrency) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
  }

  private async run<T>(request: ScanRequest<T>): Promise<ScanPage<T>> {
    const { topic, partition } = request;
    const deadline = Date.now() + request.budgetMs;
    const [starts, ends] = await Promise.all([this.admin.fetchTopicOffsetsByTimestamp(topic, request.fromMs), this.admin.fetchTopicOffsetsByTimestamp(topic, request.toMs)]);
    const begin = Math.max(request.startOffset ?? 0, Number(starts.find((s) => s.partition === partition)?.offset ?? 0));
    const end = Number(ends.find((s) => s.partition === partition)?.offset ?? 0);
    const page: ScanPage<T> = { items: [], next: null, scanned: 0, unreadable: 0 };
    if (begin >= end) return page;

    const groupId = `${this.groupPrefix}${randomUUID()}`;
    const consumer = this.kafka.consumer({ groupId, maxWaitTimeInMs: 100, maxBytesPerPartition: 1 << 20, sessionTimeout: 30_000 });
    let next = begin;
    let done = false;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const stop = (at: number | null) => {
      if (done) return;
      done = true;
      page.next = at;
      finish();
    };
    const timer = setTimeout(() => stop(next), Math.max(0, deadline - Date.now()));
    // A consumer kafkajs gives up on would read nothing until the deadline, and the page would look merely unfinished.
    let givenUp: Error | undefined;
    whenGivenUp(consumer, (error) => {
      givenUp = error;
      stop(next);
    });
    try {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: false });
      await consumer.run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          if (batch.partition !== partition || done) return;
          for (const m of batch.messages) {
            const offset = Number(m.offset);
            // Strictly forward: a batch fetched before the seek took effect may repeat offsets.
            if (offset < next) continue;
            if (offset >= end) return stop(null);
            next = offset + 1;
            page.scanned++;
            let item: T | undefined;
            try {
              item = request.match(m.key, m.value, Number(m.timestamp));
            } catch {
              page.unreadable++;
            }
            if (item !== undefined) page.items.push(item);
            if (page.items.length >= request.limit || page.scanned >= request.maxScanned) return stop(next < end ? next : null);
          }
          // The range's last offset may be a control record that is never delivered.
          if (Number(batch.lastOffset()) >= end - 1) stop(null);
        },
      });
      if (givenUp) throw givenUp;
      consumer.seek({ topic, partition, offset: String(begin) });
      await finished;
      if (givenUp) throw givenUp;
      if (page.next !== null && page.next >= end) page.next = null;
      return page;
    } finally {
      clearTimeout(timer);
      await consumer.disconnect().catch(() => undefined);
      await this.admin.deleteGroups([groupId]).catch(() => undefined);
    }
  }
}
