import type { Admin, Consumer, Kafka } from 'kafkajs';
import { BackgroundCommits } from './background-commits.js';
import { feedMetrics } from './metrics.js';
import { whenGivenUp } from './given-up.js';
import { unreadableBatch } from './patches/unreadable-batches.js';
import { retriableKafkaError } from './retriable.js';
import type { DlqRecord } from '@banstream/schemas';
import { RestartBackoff, unwatched, type Logger, type RecordWatch, type Registry } from '@banstream/platform';
import { deadLetterRecord, DLQ_REASON, reasonOfError, type DeadLetterReason, type DeadLetterSink } from './dead-letter.js';

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
  /** Applies one record; throwing skips it (see CompactedFeed). */
  onRecord(record: FeedRecord): void;
  /** The feed's name in metrics and logs (default: the topic). */
  feed?: string;
  /** Where skipped and slow records are counted (none: only logged). */
  registry?: Registry;
  /**
   * Writes skipped records to the DLQ. Set by exactly one service per topic, so the
   * DLQ holds one copy of a bad record, not one per reader: see CompactedFeed.
   */
  deadLetters?: DeadLetterSink;
  /** The watchdog's view of this topic, in a supervised process: records in hand, and those an earlier process stalled on. */
  watch?: RecordWatch;
  /** A record handled for longer is logged and counted (default 1000 ms); only a watchdog can stop one that never ends. */
  slowRecordMs?: number;
}

const DEFAULT_SLOW_RECORD_MS = 1_000;

/**
 * Reads a compacted topic (policies, allowlist, bans) from the beginning and keeps
 * tailing it. `start` resolves once every partition has been read up to the end
 * offsets it saw when it started: the state it built is then complete enough to
 * decide on.
 *
 * A record whose handler throws is skipped and the feed goes on with the next: it is
 * logged once, counted in banstream_feed_records_skipped_total (labels: feed and
 * reason code, never a key), and written to the DLQ only by the reader given
 * `deadLetters`. Every enforcer, control service and aggregator instance reads every
 * record of these topics, and the enforcer is a library inside edge services that
 * must only read Kafka; so one service per topic owns the dead letters: the control
 * service for the topics it reads (policies, bans, allowlist, alerts). Nobody
 * dead-letters the counts topic (only enforcers read it; its bad records are counted
 * and logged by each) or the baselines (only the aggregator reads them, lazily: one it
 * cannot read is logged and learning starts over). A record the process stalled on
 * before (`watch`) is skipped unhandled, with reason RECORD_STALLED.
 */
export class CompactedFeed {
  private readonly consumer: Consumer;
  private readonly feed: string;
  private readonly watch: RecordWatch;
  private readonly slowRecordMs: number;
  private readonly metrics;
  /**
   * Per partition, the offset after the last batch this instance applied and handed its
   * dead letters on. A consumer started again after a crash reads from its committed
   * offset, before records it applied (commits follow the batch): those are not
   * applied twice (the control plane's alert list appends, it would count them again).
   */
  private readonly reached = new Map<number, bigint>();
  /** Callers waiting until every partition is read up to the offsets they saw. */
  private waiters: { targets: Map<number, bigint>; resolve: () => void; reject: (error: unknown) => void }[] = [];
  /** Why the consumer stopped before the feed first caught up (kafkajs does not restart it after an error it calls not retriable, an ACL refusal say). */
  private crashed: unknown;
  /** True once start() has caught up: a later crash restarts the consumer instead of failing the feed. */
  private started = false;
  private stopping = false;
  /** The supervisor's policy for workers that die: 1 s doubling to 30 s, afresh after 60 s without a restart. */
  private readonly backoff = new RestartBackoff();
  private lastRestartAt = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  /** The restart under way (connect, then join), awaited by stop(). */
  private restarting: Promise<void> | undefined;
  private givenUp = false;
  /** Offsets committed beside the fetch loop (background-commits.ts): a commit waiting on a moving coordinator holds no ban back. */
  private readonly commits: BackgroundCommits;

  constructor(private readonly options: CompactedFeedOptions) {
    // A ban or a policy change reaches us within milliseconds whatever the fetch wait: the
    // broker answers a waiting fetch as soon as a record arrives (minBytes 1). The wait
    // only paces polling of an idle topic: 50 ms there cost an idle sidecar 8% of a core.
    this.consumer = options.kafka.consumer({ groupId: options.groupId, maxWaitTimeInMs: 500, sessionTimeout: 10_000, heartbeatInterval: 1_000 });
    this.feed = options.feed ?? options.topic;
    this.slowRecordMs = options.slowRecordMs ?? options.watch?.budgetMs ?? DEFAULT_SLOW_RECORD_MS;
    this.watch = options.watch ?? unwatched(options.topic, this.slowRecordMs);
    this.metrics = options.registry && feedMetrics(options.registry);
    this.commits = new BackgroundCommits(
      (offsets) => this.consumer.commitOffsets(offsets),
      (error, offsets) => {
        if (this.stopping) return;
        options.logger.warn(
          { err: error, topic: options.topic, partitions: offsets.map((o) => o.partition) },
          'feed offsets not committed: a restart of its consumer reads from the ones committed before',
        );
      },
    );
    // Without this, a feed refused by an ACL would wait for its catch-up for ever: it fails instead,
    // with the refusal the port named (access.ts), and so does the start of its service.
    whenGivenUp(this.consumer, (error) => {
      if (this.stopping) return;
      if (this.started) return this.restartLater(error);
      this.crashed = error;
      for (const w of this.waiters) w.reject(error);
      this.waiters = [];
    });
  }

  async start(): Promise<void> {
    const { topic } = this.options;
    const caughtUp = this.readToEnd();
    // Handled below; marked now, as it may fail (a refusal) while the consumer is still connecting.
    caughtUp.catch(() => undefined);
    await this.consumer.connect();
    await this.consumer.subscribe({ topic, fromBeginning: true });
    await this.run();
    await caughtUp;
    this.started = true;
  }

  private run(): Promise<void> {
    const { topic } = this.options;
    return this.consumer.run({
      // Ours, in the background: kafkajs would fetch nothing while a commit waits (a dead coordinator).
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const dead: DlqRecord[] = [];
        const applied = this.reached.get(batch.partition) ?? -1n;
        for (const m of batch.messages) {
          if (BigInt(m.offset) < applied) continue;
          const record = { key: m.key?.toString('utf8') ?? '', value: m.value, partition: batch.partition, offset: m.offset, timestamp: Number(m.timestamp) };
          const unread = unreadableBatch(m);
          const skipped = unread ? this.skipped(record, reasonOfError(unread.error), true) : this.handle(record);
          if (skipped && this.options.deadLetters) dead.push(deadLetterRecord({ topic, partition: batch.partition, offset: m.offset, key: m.key, value: m.value }, skipped, Date.now()));
        }
        // Not awaited: a DLQ Kafka cannot take now must not hold back the bans and policies behind it.
        if (dead.length > 0)
          void this.options.deadLetters?.(dead).catch((error: unknown) => this.options.logger.error({ err: error, topic, records: dead.length }, 'could not write skipped records to the DLQ'));
        // After the hand-off: a batch that threw before it is read and dead-lettered again after the restart.
        // Only forward: a batch read again after a rejoin (from a commit behind `reached`) may end below it.
        const next = batch.messages.length > 0 ? BigInt(batch.lastOffset()) + 1n : -1n;
        if (next > applied) {
          this.reached.set(batch.partition, next);
          this.commits.add(topic, batch.partition, next.toString());
        }
        this.checkCaughtUp();
      },
    });
  }

  /**
   * kafkajs gives up on a consumer for good after an error it does not retry: an ACL
   * refusal, or a TypeError, RangeError, ReferenceError or SyntaxError anywhere in its
   * fetch loop (its own metadata code throws a TypeError for a topic a broker lists
   * without partitions; or a bug in this handler). An enforcer whose bans feed stopped
   * would go on answering from a state that no longer moves. The consumer is started
   * again, after 1 s doubling to 30 s while it keeps failing, from the offsets it
   * committed; records this instance had applied are skipped when read again (`reached`).
   * Logged at error and counted (banstream_feed_restarts_total); `down` until the
   * consumer has joined again (an enforcer reports not ready meanwhile, answering from
   * the last state it read). The backoff starts again at 1 s once the consumer has
   * lasted a minute.
   */
  private restartLater(error: unknown): void {
    this.givenUp = true;
    const now = Date.now();
    const delayMs = this.backoff.next(now - this.lastRestartAt);
    this.lastRestartAt = now;
    this.metrics?.restarts.inc({ feed: this.feed });
    this.options.logger.error({ err: error, topic: this.options.topic, feed: this.feed, restartInMs: delayMs }, 'feed consumer stopped on an error Kafka does not retry: restarting it');
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stopping) return;
      this.restarting = this.restart().finally(() => (this.restarting = undefined));
    }, delayMs).unref();
  }

  private async restart(): Promise<void> {
    try {
      await this.consumer.connect();
      if (this.stopping) return;
      // Resolves once joined; a failure to join crashes the consumer again, which comes back to restartLater.
      await this.run();
      if (this.restartTimer === undefined) this.givenUp = false;
    } catch (error) {
      if (!this.stopping) this.restartLater(error);
    }
  }

  /** True from a crash kafkajs gave up on until the restarted consumer has joined its group. */
  get down(): boolean {
    return this.givenUp;
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
    this.stopping = true;
    clearTimeout(this.restartTimer);
    // A restart under way ends first, so no consumer joins after the disconnect.
    await this.restarting;
    // No commit after the disconnect: kafkajs's retry of one would connect the client again.
    this.commits.close();
    await this.consumer.stop();
    await this.commits.settled();
    await this.consumer.disconnect();
    // The group was this instance's alone; leave nothing behind on the broker.
    await this.options.admin.deleteGroups([this.options.groupId]).catch(() => undefined);
  }

  /** Applies one record; returns why it was skipped, if it was. */
  private handle(record: FeedRecord): DeadLetterReason | undefined {
    const { watch } = this;
    const trap = watch.trapped(record.partition, record.offset);
    if (trap) {
      if (!trap.deadLetteredAt && this.options.deadLetters) watch.deadLettered(trap);
      return this.skipped(
        record,
        { code: DLQ_REASON.stalled, message: `a process stalled on this record (${trap.heldMs} ms in hand, budget ${trap.budgetMs} ms): skipped unapplied` },
        trap.deadLetteredAt === undefined,
      );
    }
    watch.begin(record.partition, record.offset);
    let failure: unknown;
    let failed = false;
    try {
      this.options.onRecord(record);
    } catch (error) {
      failure = error;
      failed = true;
    }
    const heldMs = watch.end();
    if (heldMs > this.slowRecordMs) {
      this.metrics?.slow.inc({ feed: this.feed });
      this.options.logger.warn(
        { topic: this.options.topic, partition: record.partition, offset: record.offset, heldMs, budgetMs: this.slowRecordMs },
        'record applied, but slower than the time budget',
      );
    }
    return failed ? this.skipped(record, reasonOfError(failure), true) : undefined;
  }

  private skipped(record: FeedRecord, reason: DeadLetterReason, deadLetter: boolean): DeadLetterReason | undefined {
    this.metrics?.skipped.inc({ feed: this.feed, reason: reason.code });
    this.options.logger.warn({ topic: this.options.topic, partition: record.partition, offset: record.offset, reason: reason.code, detail: reason.message }, 'record skipped unapplied');
    return deadLetter ? reason : undefined;
  }

  private async readToEnd(): Promise<void> {
    const { admin, topic } = this.options;
    const ends = await endOffsets(admin, topic);
    const targets = new Map(ends.filter((e) => BigInt(e.high) > BigInt(e.low)).map((e) => [e.partition, BigInt(e.high)]));
    if (this.crashed !== undefined) throw this.crashed;
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ targets, resolve, reject }));
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
 * retry budget, and kafkajs 2.2.4's TypeError when the broker it asked lists the topic
 * without partitions yet (`high.pop()` of nothing in admin.fetchTopicOffsets): on a
 * cluster, a broker learns of a topic just created a moment after the others. An
 * enforcer started then on three brokers exited with it.
 */
export async function endOffsets(admin: Pick<Admin, 'fetchTopicOffsets'>, topic: string, retryMs = END_OFFSETS_RETRY_MS): Promise<Awaited<ReturnType<Admin['fetchTopicOffsets']>>> {
  const deadline = Date.now() + retryMs;
  for (;;) {
    try {
      return await admin.fetchTopicOffsets(topic);
    } catch (error) {
      const metadataNotReady = error instanceof TypeError && error.message.includes("'partitions'");
      if (!(metadataNotReady || retriableKafkaError(error)) || Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
