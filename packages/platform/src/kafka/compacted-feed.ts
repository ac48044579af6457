import type { Admin, Consumer, Kafka } from 'kafkajs';
import type { Logger } from '../logging/logger.js';

export interface FeedRecord {
  key: string;
  /** null: a tombstone. */
  value: Buffer | null;
  partition: number;
  offset: string;
  /** The record's Kafka timestamp (ms): when it was produced. */
  timestamp: number;
}

export interface CompactedFeedOptions {
  kafka: Kafka;
  admin: Admin;
  topic: string;
  /** Unique per instance: every instance reads every record of the topic. */
  groupId: string;
  logger: Logger;
  onRecord(record: FeedRecord): void;
}

/**
 * Reads a compacted topic (policies, allowlist, bans) from the beginning and keeps
 * tailing it. `start` resolves once every partition has been read up to the end
 * offsets it saw when it started: the state it built is then complete enough to
 * decide on. A record whose handler throws is logged and skipped; the feed goes on.
 */
export class CompactedFeed {
  private readonly consumer: Consumer;
  private readonly reached = new Map<number, bigint>();
  /** Callers waiting until every partition is read up to the offsets they saw. */
  private waiters: { targets: Map<number, bigint>; resolve: () => void }[] = [];

  constructor(private readonly options: CompactedFeedOptions) {
    // A ban or a policy change reaches us within milliseconds whatever the fetch wait: the
    // broker answers a waiting fetch as soon as a record arrives (minBytes 1). The wait
    // only paces polling of an idle topic: 50 ms there cost an idle sidecar 8% of a core.
    this.consumer = options.kafka.consumer({ groupId: options.groupId, maxWaitTimeInMs: 500, sessionTimeout: 10_000, heartbeatInterval: 1_000 });
  }

  async start(): Promise<void> {
    const { topic } = this.options;
    const caughtUp = this.readToEnd();
    await this.consumer.connect();
    await this.consumer.subscribe({ topic, fromBeginning: true });
    await this.consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) {
          this.handle({ key: m.key?.toString('utf8') ?? '', value: m.value, partition: batch.partition, offset: m.offset, timestamp: Number(m.timestamp) });
        }
        if (batch.messages.length > 0) this.reached.set(batch.partition, BigInt(batch.lastOffset()) + 1n);
        this.checkCaughtUp();
      },
    });
    await caughtUp;
  }

  /**
   * Resolves once every partition has been read up to the end offsets it has now:
   * whatever was written before this call is in the state (a new owner of a
   * partition calls it before taking over what the old owner wrote).
   */
  async catchUp(): Promise<void> {
    await this.readToEnd();
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
    // The group was this instance's alone; leave nothing behind on the broker.
    await this.options.admin.deleteGroups([this.options.groupId]).catch(() => undefined);
  }

  private handle(record: FeedRecord): void {
    try {
      this.options.onRecord(record);
    } catch (error) {
      this.options.logger.warn({ err: error, topic: this.options.topic, key: record.key, offset: record.offset }, 'record skipped');
    }
  }

  private async readToEnd(): Promise<void> {
    const { admin, topic } = this.options;
    const ends = await endOffsets(admin, topic);
    const targets = new Map(ends.filter((e) => BigInt(e.high) > BigInt(e.low)).map((e) => [e.partition, BigInt(e.high)]));
    const done = new Promise<void>((resolve) => this.waiters.push({ targets, resolve }));
    this.checkCaughtUp();
    return done;
  }

  private checkCaughtUp(): void {
    this.waiters = this.waiters.filter((w) => {
      for (const [partition, end] of w.targets) if ((this.reached.get(partition) ?? 0n) < end) return true;
      w.resolve();
      return false;
    });
  }
}

/** How long a just-created topic may take to get leaders the metadata agrees on. */
const END_OFFSETS_RETRY_MS = 15_000;

/**
 * The topic's end offsets, retrying errors Kafka calls retriable (a partition whose
 * leader is still being elected answers "not the leader") beyond kafkajs's own short
 * retry budget.
 */
async function endOffsets(admin: Admin, topic: string): Promise<Awaited<ReturnType<Admin['fetchTopicOffsets']>>> {
  const deadline = Date.now() + END_OFFSETS_RETRY_MS;
  for (;;) {
    try {
      return await admin.fetchTopicOffsets(topic);
    } catch (error) {
      if (!(error as { retriable?: boolean }).retriable || Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
