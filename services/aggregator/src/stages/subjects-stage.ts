import type { Consumer, EachBatchPayload } from 'kafkajs';
import { SCHEMA_NAMES, type DlqRecord, type SubjectCountBatch } from '@banstream/schemas';
import { observe } from '../engine/decider.js';
import { GEO_POLICY_ID, GeoCounts } from '../engine/geo-counts.js';
import { countedAt, receivedAt } from '../engine/event-time.js';
import { emptyReport, GeoWatch, type GeoWatchReport } from '../engine/geo-watch.js';
import { PartitionState } from '../engine/partition-state.js';
import { AppliedOffsets } from '../engine/repartition.js';
import { AssignedPartitions } from '../kafka/assigned-partitions.js';
import { bansWaiting, commitLive, deadLetter, reasonOf, type StageContext } from './context.js';

const PARTITIONS_AT_ONCE = 4;

export interface SubjectsPartition {
  counts: PartitionState;
  applied: AppliedOffsets;
  geo: GeoCounts;
  /** Geographic alerting for the countries and regions of this partition. */
  watch: GeoWatch | undefined;
}

/**
 * Stage two: reads the subjects topic (the repartition by subject) in its own
 * consumer group and counts and decides the subjects it owns: users, API keys,
 * countries and every other subject that is not local to an events partition.
 */
export class SubjectsStage {
  readonly consumer: Consumer;
  readonly assigned: AssignedPartitions<SubjectsPartition>;
  private readonly codec;

  constructor(private readonly ctx: StageContext) {
    const { config } = ctx;
    const groupId = `${config.AGGREGATOR_GROUP_ID}.subjects`;
    this.codec = ctx.catalog.codec(SCHEMA_NAMES.subjectCountBatch);
    this.consumer = ctx.kafka.consumer({
      groupId,
      sessionTimeout: config.AGGREGATOR_SESSION_TIMEOUT_MS,
      heartbeatInterval: Math.floor(config.AGGREGATOR_SESSION_TIMEOUT_MS / 10),
      maxWaitTimeInMs: 20,
    });
    this.assigned = new AssignedPartitions({
      consumer: this.consumer, admin: ctx.admin, topic: ctx.topics.subjects, groupId, logger: ctx.logger,
      horizonMs: ctx.horizonMs, nowMs: Date.now,
      create: (p) => ({
        counts: new PartitionState(p, { graceMs: config.AGGREGATOR_GRACE_MS, hotShare: config.AGGREGATOR_HOT_SHARE, countIntervalMs: config.AGGREGATOR_COUNT_INTERVAL_MS }),
        applied: new AppliedOffsets(),
        geo: new GeoCounts(config.AGGREGATOR_GEO_WINDOW_MS, config.AGGREGATOR_COUNT_INTERVAL_MS),
        watch: ctx.geo ? new GeoWatch(ctx.geo) : undefined,
      }),
      ...(ctx.geo ? { prepare: () => ctx.geo!.prepare() } : {}),
    });
  }

  /** Connects and subscribes; the group is joined by start(). */
  async connect(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: this.ctx.topics.subjects, fromBeginning: false });
  }

  async start(): Promise<void> {
    // Several partitions at once: one partition's wait for its output acknowledgement
    // overlaps another's counting.
    // Commits are ours (commitLive): with auto-commit, kafkajs would also commit the
    // replay start a seek sets, moving the group's offset back.
    await this.consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: PARTITIONS_AT_ONCE, eachBatch: (payload) => this.onBatch(payload) });
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
  }

  private async onBatch({ batch, resolveOffset, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { ctx } = this;
    const p = batch.partition;
    const dead: DlqRecord[] = [];
    const report = emptyReport();
    let last: string | undefined;
    /** The last record of the batch this member had counted before (redelivered after a rebalance). */
    let counted: string | undefined;
    for (const m of batch.messages) {
      if (!isRunning() || isStale()) break;
      const accepted = this.assigned.accept(p, m.offset);
      if (!accepted) {
        if (this.assigned.counted(p, m.offset)) counted = m.offset;
        continue;
      }
      last = m.offset;
      let decoded: SubjectCountBatch;
      try {
        if (m.value === null) throw new Error('empty value: expected a SubjectCountBatch');
        decoded = this.codec.decode(m.value);
      } catch (error) {
        dead.push(deadLetter(ctx.topics.subjects, p, m.offset, m.key, m.value, reasonOf(error), Date.now()));
        continue;
      }
      this.apply(accepted.state, decoded, accepted.live, report, receivedAt(m.timestamp, Date.now()));
      if (bansWaiting(ctx)) await ctx.flushDecisions();
    }
    ctx.geo?.record(report);
    if (last === undefined) {
      // Nothing new, only records counted before a rebalance: move kafkajs past them (AssignedPartitions.counted).
      if (counted !== undefined) resolveOffset(counted);
      return;
    }
    await ctx.publishUntilDone('dead letters', () => ctx.publisher.deadLetters(dead));
    for (const d of dead) ctx.metrics.dlq.inc({ reason: d.reasonCode });
    await ctx.flushDecisions();
    // kafkajs fetches again from the last resolved offset, so a replay longer than one
    // fetch must resolve to move on; only live offsets are committed on purpose (the
    // seek that started the replay has already committed its start).
    resolveOffset(last);
    // Evicted, this member's uncommitted records come back after it rejoins: its state goes, rebuilt by replay.
    if (this.assigned.isLive(p, last)) await commitLive(this.consumer, batch.topic, p, last, this.assigned.releaser());
    ctx.metrics.lag.set({ stage: 'subjects', partition: String(p) }, Number(batch.offsetLag()));
  }

  private apply(owner: SubjectsPartition, batch: SubjectCountBatch, live: boolean, report: GeoWatchReport, receivedMs: number): void {
    const { ctx } = this;
    const now = Date.now();
    const entries = owner.applied.fresh(batch);
    const skipped = batch.entries.length - entries.length;
    if (skipped > 0) ctx.metrics.entriesDuplicate.inc(skipped);
    for (const e of entries) {
      const state = owner.counts;
      // Lateness was judged in stage one, against the events partition's own clock;
      // an entry dated past its record moves no clock here either (engine/event-time.ts).
      const t = countedAt(e.timestamp, receivedMs);
      state.advance(t);
      if (e.policyId === GEO_POLICY_ID) {
        owner.geo.add(state, e.subject, t, e.count);
        owner.watch?.add(e.subject, t, e.count, now, ctx.outbox, report);
        if (live && e.subject.startsWith('country:')) ctx.metrics.geoRequests.inc({ country: countryLabel(e.subject.slice(8)) }, e.count);
        continue;
      }
      const policy = ctx.book.get(e.policyId);
      if (!policy || !policy.enabled || policy.enforcement.type !== 'async') continue; // removed since it was sent
      observe(ctx.decider, state, policy, e.subject, t, e.count, t, ctx.outbox);
    }
    ctx.metrics.entriesApplied.inc(entries.length);
  }
}

/** Edges may send any text as a country: only ISO 3166 shapes become labels. */
function countryLabel(code: string): string {
  return /^[A-Z]{2}$/.test(code) ? code : 'other';
}
