import { deadLetterRecord, DLQ_REASON, MemberCommits, type Admin, type Consumer, type Kafka } from '@banstream/kafka';
import type { Logger, RecordWatch, Trap } from '@banstream/platform';
import type { DlqRecord, SchemaCatalog } from '@banstream/schemas';
import { BanstreamError } from '@banstream/core';
import type { AggregatorConfig } from '../config.js';
import type { DeciderContext, GeoWatchDeps, GeoWatchReport, Outbox } from '@banstream/engine';
import type { PolicyBook } from '@banstream/core';
import type { AggregatorTopics, Publisher } from '../kafka/publisher.js';
import type { AggregatorMetrics } from '../metrics.js';

/**
 * How long a stage's fetch may wait at the broker for records. The broker answers a
 * waiting fetch as soon as one arrives, so a long wait adds no delay; 20 ms made an idle
 * worker poll 50 times a second per stage (docs/services/aggregator.md#run).
 */
export const FETCH_WAIT_MS = 500;

/** What both counting stages share. */
export interface StageContext {
  kafka: Kafka;
  admin: Admin;
  logger: Logger;
  config: AggregatorConfig;
  catalog: SchemaCatalog;
  topics: AggregatorTopics;
  /** Partition counts of the events and subjects topics, read at start. */
  partitions: { events: number; subjects: number };
  metrics: AggregatorMetrics;
  book: PolicyBook;
  decider: DeciderContext;
  outbox: Outbox;
  publisher: Publisher;
  /** Publishes what the outbox holds, in order with every earlier call. */
  flushDecisions(): Promise<void>;
  /** Runs a publication of stage output (repartition, dead letters) until Kafka takes it. */
  publishUntilDone(what: string, publish: () => Promise<void>): Promise<void>;
  /** Longest window to rebuild on assignment, grace and clock skew included. */
  horizonMs(): number;
  /** Geographic alerting; absent when GEO_ALERT_ENABLED is false. */
  geo?: GeoContext;
  /** The watchdog's view of a topic's records (in hand, stalled on before); a measuring stand-in without a watchdog. */
  watch(topic: string): RecordWatch;
  /** Reads the watchdog's traps again (a new assignment may bring a partition another process stalled on). */
  reloadTraps(): void;
}

export interface GeoContext extends GeoWatchDeps {
  /** Reads what the baselines topic holds now, before owned partitions replay. */
  prepare(): Promise<void>;
  /** Counts what a watch reported in metrics. */
  record(report: GeoWatchReport): void;
}

/**
 * Whether a ban waits in the outbox: the stages publish it as soon as the record that
 * crossed its threshold is counted, not after the rest of the fetch (a backlog's fetch
 * can hold seconds of events).
 */
export function bansWaiting(ctx: StageContext): boolean {
  return ctx.outbox.bans.length > 0;
}

/** The DLQ record for input that could not be used, keeping its bytes untouched (up to the DLQ's bounds). */
export function deadLetter(topic: string, partition: number, offset: string, key: Buffer | null, value: Buffer | null, reason: Reason, nowMs: number): DlqRecord {
  return deadLetterRecord({ topic, partition, offset, key, value }, reason, nowMs);
}

/** The reason a record met again after a process stalled on it goes to the DLQ unhandled. */
export function stalledReason(trap: Trap): Reason {
  return {
    code: DLQ_REASON.stalled,
    message: `process ${trap.pid} had this record in hand for ${trap.heldMs} ms (budget ${trap.budgetMs} ms) and was killed; dead-lettered unhandled`,
  };
}

export interface Reason {
  code: string;
  message: string;
}

/** A decoding failure as a DLQ reason: the error's own code when it has one. */
export function reasonOf(error: unknown): Reason {
  const code = error instanceof BanstreamError ? error.code : 'SCHEMA_INVALID_VALUE';
  return { code, message: error instanceof Error ? error.message : String(error) };
}

/** Group errors after which a commit is refused until the member joins again. */
const REJOIN_ERRORS = new Set(['UNKNOWN_MEMBER_ID', 'ILLEGAL_GENERATION', 'REBALANCE_IN_PROGRESS', 'NOT_COORDINATOR_FOR_GROUP']);

/** The group protocol error inside `error` (kafkajs wraps it in its retrier's errors), when it asks the member to rejoin. */
export function rejoinCause(error: unknown): Error | undefined {
  for (let e = error; e instanceof Error; e = e.cause) {
    if (REJOIN_ERRORS.has((e as { type?: unknown }).type as string)) return e;
  }
  return undefined;
}

/**
 * A stage's offset commits: its handlers wait for them at most MEMBER_COMMIT_WAIT_MS, so a
 * commit waiting for a moving coordinator holds no fetch back (MemberCommits); each
 * rebalance drops what the generation before had not sent.
 */
export function stageCommits(consumer: Consumer): MemberCommits {
  const commits = new MemberCommits((offsets) => consumer.commitOffsets(offsets));
  consumer.on(consumer.events.GROUP_JOIN, () => commits.rejoined());
  return commits;
}

/**
 * Commits a live record's offset: everything before it was processed and its output acknowledged.
 * A commit refused because this member left the group (a pause longer than the session
 * timeout) calls `lost` and throws the protocol error itself: kafkajs rejoins on that one,
 * whereas the non-retriable wrapper its retrier puts around it stops the consumer for good.
 * A commit that outlasted its handler's wait fails at the next handler's commit instead.
 */
export async function commitLive(commits: MemberCommits, topic: string, partition: number, offset: string, lost: () => void): Promise<void> {
  try {
    await commits.commit(topic, partition, (BigInt(offset) + 1n).toString());
  } catch (error) {
    const cause = rejoinCause(error);
    if (!cause) throw error;
    lost();
    throw cause;
  }
}
