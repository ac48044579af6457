import { unreadableBatch, type Consumer, type EachBatchPayload, type MemberCommits, type KafkaMessage } from '@banstream/kafka';
import type { Trap } from '@banstream/platform';
import { SCHEMA_NAMES, type DlqRecord, type SubjectCountBatch, type SubjectCountEntry } from '@banstream/schemas';
import { AppliedOffsets, countedAt, emptyReport, GEO_POLICY_ID, GeoCounts, GeoWatch, observe, PartitionState, receivedAt, type GeoWatchReport } from '@banstream/engine';
import { AssignedPartitions } from '../kafka/assigned-partitions.js';
import { bansWaiting, commitLive, deadLetter, FETCH_WAIT_MS, reasonOf, stageCommits, type StageContext } from './context.js';
import { RecordGuard } from './record-guard.js';

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
  /** Offsets committed after each batch, the handler waiting for them only so long (stageCommits). */
  private readonly commits: MemberCommits;
  readonly assigned: AssignedPartitions<SubjectsPartition>;
  private readonly codec;
  private readonly guard: RecordGuard;
  /** Dead letters of replayed records: sent when the record was live, by this owner or an earlier one. */
  private readonly replayDead: DlqRecord[] = [];

  constructor(private readonly ctx: StageContext) {
    const { config } = ctx;
    const groupId = `${config.AGGREGATOR_GROUP_ID}.subjects`;
    this.codec = ctx.catalog.codec(SCHEMA_NAMES.subjectCountBatch);
    this.guard = new RecordGuard(ctx, 'subjects', ctx.topics.subjects);
    this.consumer = ctx.kafka.consumer({
      groupId,
      sessionTimeout: config.AGGREGATOR_SESSION_TIMEOUT_MS,
      heartbeatInterval: Math.floor(config.AGGREGATOR_SESSION_TIMEOUT_MS / 10),
      maxWaitTimeInMs: FETCH_WAIT_MS,
    });
    this.assigned = new AssignedPartitions({
      consumer: this.consumer,
      admin: ctx.admin,
      topic: ctx.topics.subjects,
      groupId,
      logger: ctx.logger,
      horizonMs: ctx.horizonMs,
      nowMs: Date.now,
      create: (p) => ({
        counts: new PartitionState(p, { graceMs: config.AGGREGATOR_GRACE_MS, hotShare: config.AGGREGATOR_HOT_SHARE, countIntervalMs: config.AGGREGATOR_COUNT_INTERVAL_MS }),
        applied: new AppliedOffsets(),
        geo: new GeoCounts(config.AGGREGATOR_GEO_WINDOW_MS, config.AGGREGATOR_COUNT_INTERVAL_MS),
        watch: ctx.geo ? new GeoWatch(ctx.geo) : undefined,
      }),
      ...(ctx.geo ? { prepare: () => ctx.geo!.prepare() } : {}),
    });
    this.commits = stageCommits(this.consumer);
    // Another process's trap may come with a partition assigned now.
    this.consumer.on(this.consumer.events.GROUP_JOIN, () => ctx.reloadTraps());
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
    // Stopped first (its handlers done, the group left), then the commits beside it settled: none reconnects after the disconnect.
    await this.consumer.stop();
    this.commits.close();
    await this.commits.settled();
    await this.consumer.disconnect();
  }

  private async onBatch({ batch, resolveOffset, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { ctx } = this;
    const p = batch.partition;
    const dead: DlqRecord[] = [];
    const met: Trap[] = [];
    const report = emptyReport();
    let last: string | undefined;
    /** The last record of the batch this member had counted before (redelivered after a rebalance). */
    let counted: string | undefined;
    for (const m of batch.messages) {
      if (!isRunning() || isStale()) break;
      const accepted = this.assigned.accept(p, m.offset, unreadableBatch(m)?.firstOffset);
      if (!accepted) {
        if (this.assigned.counted(p, m.offset)) counted = m.offset;
        continue;
      }
      last = m.offset;
      if (this.guard.skipTrapped(p, m, dead, met)) continue;
      const letters = accepted.live ? dead : this.replayDead;
      this.guard.begin(p, m.offset);
      try {
        this.record(accepted.state, accepted.live, m, p, letters, report);
      } catch (error) {
        this.guard.failed(error, p, m, m.value, undefined, letters);
      }
      this.guard.end(p, m.offset);
      this.replayDead.length = 0;
      if (bansWaiting(ctx)) await ctx.flushDecisions();
    }
    ctx.geo?.record(report);
    if (last === undefined) {
      // Nothing new, only records counted before a rebalance: move kafkajs past them (AssignedPartitions.counted).
      if (counted !== undefined) resolveOffset(counted);
      return;
    }
    await ctx.publishUntilDone('dead letters', ctx.publisher.deadLetters(dead));
    for (const d of dead) ctx.metrics.dlq.inc({ reason: d.reasonCode });
    this.guard.deadLettered(met);
    await ctx.flushDecisions();
    // kafkajs fetches again from the last resolved offset, so a replay longer than one
    // fetch must resolve to move on; only live offsets are committed on purpose (the
    // seek that started the replay has already committed its start).
    resolveOffset(last);
    // Evicted, this member's uncommitted records come back after it rejoins: its state goes, rebuilt by replay.
    if (this.assigned.isLive(p, last)) await commitLive(this.commits, batch.topic, p, last, this.assigned.releaser());
    ctx.metrics.lag.set({ stage: 'subjects', partition: String(p) }, Number(batch.offsetLag()));
  }

  /** Decodes and applies one record; an entry whose application throws goes to the DLQ alone, and the next ones are applied. */
  private record(owner: SubjectsPartition, live: boolean, m: KafkaMessage, p: number, dead: DlqRecord[], report: GeoWatchReport): void {
    const { ctx } = this;
    let decoded: SubjectCountBatch;
    try {
      if (m.value === null) throw unreadableBatch(m)?.error ?? new Error('empty value: expected a SubjectCountBatch');
      decoded = this.codec.decode(m.value);
    } catch (error) {
      dead.push(deadLetter(ctx.topics.subjects, p, m.offset, m.key, m.value, reasonOf(error), Date.now()));
      return;
    }
    const now = Date.now();
    const { entries } = decoded;
    const fresh = owner.applied.fresh(decoded);
    const skipped = entries.length - fresh.length;
    if (skipped > 0) ctx.metrics.entriesDuplicate.inc(skipped);
    // An entry dated past its record moves no clock here either (@banstream/engine, event-time.ts).
    const receivedMs = receivedAt(m.timestamp, now);
    // The loop resumes after an entry that threw: no cost per entry.
    for (let k = 0; k < fresh.length; k++) {
      try {
        for (; k < fresh.length; k++) this.apply(owner, entries[fresh[k]!]!, live, now, report, receivedMs);
      } catch (error) {
        const i = fresh[k]!;
        this.guard.failed(error, p, m, this.single(decoded, entries[i]!, m.value), `entries[${i}]`, dead);
      }
    }
    ctx.metrics.entriesApplied.inc(fresh.length);
  }

  private apply(owner: SubjectsPartition, e: SubjectCountEntry, live: boolean, now: number, report: GeoWatchReport, receivedMs: number): void {
    const { ctx } = this;
    const state = owner.counts;
    // Lateness was judged in stage one, against the events partition's own clock;
    // an entry dated past its record moves no clock here either (@banstream/engine, event-time.ts).
    const t = countedAt(e.timestamp, receivedMs);
    state.advance(t);
    if (e.policyId === GEO_POLICY_ID) {
      owner.geo.add(state, e.subject, t, e.count);
      owner.watch?.add(e.subject, t, e.count, now, ctx.outbox, report);
      if (live && e.subject.startsWith('country:')) ctx.metrics.geoRequests.inc({ country: countryLabel(e.subject.slice(8)) }, e.count);
      return;
    }
    const policy = ctx.book.get(e.policyId);
    if (!policy || !policy.enabled || policy.enforcement.type !== 'async') return; // removed since it was sent
    observe(ctx.decider, state, policy, e.subject, t, e.count, t, ctx.outbox, live);
  }

  /** One entry alone, so its DLQ record replays without the others; the whole record when it cannot be written alone. */
  private single(batch: SubjectCountBatch, entry: SubjectCountEntry, record: Buffer | null): Buffer | null {
    try {
      return this.codec.encode({ sourcePartition: batch.sourcePartition, entries: [entry] });
    } catch {
      return record;
    }
  }
}

/** Edges may send any text as a country: only ISO 3166 shapes become labels. */
function countryLabel(code: string): string {
  return /^[A-Z]{2}$/.test(code) ? code : 'other';
}
