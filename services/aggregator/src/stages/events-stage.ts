import { unreadableBatch, type Consumer, type EachBatchPayload, type MemberCommits, type KafkaMessage } from '@banstream/kafka';
import type { RequestAttributes } from '@banstream/core';
import type { Trap } from '@banstream/platform';
import { SCHEMA_NAMES, type DlqRecord } from '@banstream/schemas';
import {
  checkEvent,
  countedEventsDecoder,
  countedEventsReader,
  eventsAlone,
  GEO_POLICY_ID,
  LATE,
  observeKeyed,
  PartitionState,
  readsHeaders,
  receivedAt,
  RepartitionBuffer,
  routeOf,
  type CountedEvent,
  type CountedEventsReader,
  type EventsAloneCodecs,
  type Route,
  type Sighting,
} from '@banstream/engine';
import type { CompiledPolicy } from '@banstream/core';
import { AssignedPartitions } from '../kafka/assigned-partitions.js';
import { bansWaiting, commitLive, deadLetter, FETCH_WAIT_MS, reasonOf, stageCommits, type StageContext } from './context.js';
import { EventInRecord } from './event-at-hand.js';
import { RecordGuard } from './record-guard.js';

const PARTITIONS_AT_ONCE = 4;

/** A hand-written reader for the usual writer schema, and avsc for the rest (and for the errors). */
interface EventsDecoder {
  read: CountedEventsReader;
  decode: ReturnType<typeof countedEventsDecoder>['decode'];
}

function eventsDecoder(ctx: StageContext, headers: boolean): EventsDecoder {
  return { read: countedEventsReader(ctx.catalog, { headers }), decode: countedEventsDecoder(ctx.catalog, { headers }).decode };
}

export interface EventsPartition {
  counts: PartitionState;
  repartition: RepartitionBuffer;
}

/**
 * Stage one: reads the events topic in the consumer group. Subjects local to an
 * events partition (ip, /24 or longer prefixes) are counted and decided here; the
 * others are summed per record and sent to their owner on the subjects topic.
 * Input offsets are committed only after that repartition output is acknowledged.
 */
export class EventsStage {
  readonly consumer: Consumer;
  /** Offsets committed after each batch, the handler waiting for them only so long (stageCommits). */
  private readonly commits: MemberCommits;
  readonly assigned: AssignedPartitions<EventsPartition>;
  private readonly routes = new WeakMap<CompiledPolicy, RouteInStage>();
  /** The event being counted, for the evidence of hot subjects (sampled there, read further only then). */
  private readonly atHand = new EventInRecord();
  /** The sighting each partition-local count fills in: one object, not one per event. */
  private readonly sighting: Sighting = { rest: '', timeMs: 0, count: 1, watermark: 0, event: this.atHand, live: false };
  private readonly country = new ScopedText('country:');
  private readonly region = new ScopedText('region:');
  private readonly decoders;
  private readonly aloneCodecs: EventsAloneCodecs;
  private readonly guard: RecordGuard;
  /** Dead letters of replayed records: sent when the record was live, by this owner or an earlier one. */
  private readonly replayDead: DlqRecord[] = [];
  /** The decoder for the policies in force (the book's array changes identity when they change). */
  private decoding: { policies: readonly CompiledPolicy[]; decoder: EventsDecoder } | undefined;

  constructor(private readonly ctx: StageContext) {
    const { config } = ctx;
    this.decoders = { withHeaders: eventsDecoder(ctx, true), withoutHeaders: eventsDecoder(ctx, false) };
    const batchCodec = ctx.catalog.codec(SCHEMA_NAMES.requestEventBatch);
    const eventCodec = ctx.catalog.codec(SCHEMA_NAMES.requestEvent);
    this.aloneCodecs = { decodeRecord: (b) => batchCodec.decode(b), encodeEvent: (e) => eventCodec.encode(e) };
    this.guard = new RecordGuard(ctx, 'events', ctx.topics.events);
    this.consumer = ctx.kafka.consumer({
      groupId: config.AGGREGATOR_GROUP_ID,
      sessionTimeout: config.AGGREGATOR_SESSION_TIMEOUT_MS,
      heartbeatInterval: Math.floor(config.AGGREGATOR_SESSION_TIMEOUT_MS / 10),
      maxWaitTimeInMs: FETCH_WAIT_MS,
      // Small enough that a backlog's fetch does not hold an attacker's record behind
      // seconds of others; larger drains a backlog faster (README "Configuration").
      maxBytesPerPartition: config.AGGREGATOR_FETCH_KB_PER_PARTITION << 10,
    });
    this.assigned = new AssignedPartitions({
      consumer: this.consumer,
      admin: ctx.admin,
      topic: ctx.topics.events,
      groupId: config.AGGREGATOR_GROUP_ID,
      logger: ctx.logger,
      horizonMs: ctx.horizonMs,
      nowMs: Date.now,
      create: (p) => ({
        counts: new PartitionState(p, { graceMs: config.AGGREGATOR_GRACE_MS, hotShare: config.AGGREGATOR_HOT_SHARE, countIntervalMs: config.AGGREGATOR_COUNT_INTERVAL_MS }),
        repartition: new RepartitionBuffer(p, ctx.partitions.subjects),
      }),
    });
    this.commits = stageCommits(this.consumer);
    // Another process's trap may come with a partition assigned now.
    this.consumer.on(this.consumer.events.GROUP_JOIN, () => ctx.reloadTraps());
  }

  /** Connects and subscribes; the group is joined by start(). */
  async connect(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: this.ctx.topics.events, fromBeginning: false });
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
    const p = batch.partition;
    const dead: DlqRecord[] = [];
    const met: Trap[] = [];
    let last: string | undefined;
    /** The last record of the batch this member had counted before (redelivered after a rebalance). */
    let counted: string | undefined;
    let owner: EventsPartition | undefined;
    let replayed = 0;
    let fresh = 0;
    for (const m of batch.messages) {
      if (!isRunning() || isStale()) break;
      const accepted = this.assigned.accept(p, m.offset, unreadableBatch(m)?.firstOffset);
      if (!accepted) {
        if (this.assigned.counted(p, m.offset)) counted = m.offset;
        continue;
      }
      owner = accepted.state;
      last = m.offset;
      if (this.guard.skipTrapped(p, m, dead, met)) continue;
      const n = this.guarded(owner, accepted.live, m, p, accepted.live ? dead : this.replayDead);
      this.replayDead.length = 0;
      if (accepted.live) fresh += n;
      else replayed += n;
      if (bansWaiting(this.ctx)) await this.ctx.flushDecisions();
    }
    if (fresh > 0) this.ctx.metrics.eventsConsumed.inc({ replay: 'false' }, fresh);
    if (replayed > 0) this.ctx.metrics.eventsConsumed.inc({ replay: 'true' }, replayed);
    if (last === undefined || !owner) {
      // Nothing new, only records counted before a rebalance: move kafkajs past them (AssignedPartitions.counted).
      if (counted !== undefined) resolveOffset(counted);
      return;
    }
    // Taken out of the buffer: if Kafka refused them, nothing would send them again.
    const batches = owner.repartition.take();
    await this.ctx.publishUntilDone('the repartition', this.ctx.publisher.repartition(batches));
    await this.ctx.publishUntilDone('dead letters', this.ctx.publisher.deadLetters(dead));
    for (const d of dead) this.ctx.metrics.dlq.inc({ reason: d.reasonCode });
    this.guard.deadLettered(met);
    await this.ctx.flushDecisions();
    // kafkajs fetches again from the last resolved offset, so a replay longer than one
    // fetch must resolve to move on; only live offsets are committed on purpose (the
    // seek that started the replay has already committed its start).
    resolveOffset(last);
    // Evicted, this member's uncommitted records come back after it rejoins: its state goes, rebuilt by replay.
    if (this.assigned.isLive(p, last)) await commitLive(this.commits, batch.topic, p, last, this.assigned.releaser());
    this.ctx.metrics.lag.set({ stage: 'events', partition: String(p) }, Number(batch.offsetLag()));
  }

  /** record(), as the watchdog's record in hand; a throw outside any one event dead-letters the record whole. */
  private guarded(owner: EventsPartition, live: boolean, m: KafkaMessage, p: number, dead: DlqRecord[]): number {
    this.guard.begin(p, m.offset);
    let n = 0;
    try {
      n = this.record(owner, live, m, p, dead);
    } catch (error) {
      this.guard.failed(error, p, m, m.value, undefined, dead);
    }
    this.atHand.release();
    this.guard.end(p, m.offset);
    return n;
  }

  /**
   * Counts one events record; returns how many events it counted. An event whose
   * counting throws goes to the DLQ alone and the next ones are counted (the loop
   * resumes after it: no cost per event).
   */
  private record(owner: EventsPartition, live: boolean, m: KafkaMessage, p: number, dead: DlqRecord[]): number {
    const { ctx } = this;
    const now = Date.now();
    let events: CountedEvent[];
    try {
      if (m.value === null) throw unreadableBatch(m)?.error ?? new Error('empty value: expected a RequestEventBatch');
      const decoder = this.decoder();
      const tails = this.atHand.tails;
      const read = decoder.read(m.value, tails);
      if (read === undefined) tails.length = 0;
      events = read ?? decoder.decode(m.value).events;
    } catch (error) {
      dead.push(deadLetter(ctx.topics.events, p, m.offset, m.key, m.value, reasonOf(error), now));
      return 0;
    }
    owner.repartition.begin(Number(m.offset));
    const state = owner.counts;
    // Event times are weighed against the record's, never moving a clock past it (@banstream/engine, event-time.ts).
    const received = receivedAt(m.timestamp, now);
    let counted = 0;
    /** Made at the first event that goes to the DLQ alone: the record is decoded in full once, not once per event. */
    let alone: ((index: number) => Buffer) | undefined;
    for (let i = 0; i < events.length; i++) {
      try {
        for (; i < events.length; i++) {
          const event = events[i]!;
          const checked = checkEvent(event, received, ctx.config.AGGREGATOR_MAX_FUTURE_MS);
          if (!checked.ok) {
            alone ??= eventsAlone(this.aloneCodecs, m.value!);
            dead.push(deadLetter(ctx.topics.events, p, m.offset, m.key, alone(i), { code: checked.code, message: `events[${i}]: ${checked.message}` }, now));
            continue;
          }
          const t = state.admit(event.timestamp, received);
          if (t === LATE) {
            ctx.metrics.late.inc();
            continue;
          }
          this.atHand.at(m.value!, i, checked.attrs);
          this.count(owner, live, checked.attrs, t, state.watermark);
          counted++;
        }
      } catch (error) {
        alone ??= eventsAlone(this.aloneCodecs, m.value!);
        this.guard.failed(error, p, m, alone(i), `events[${i}]`, dead);
      }
    }
    return counted;
  }

  private count(owner: EventsPartition, live: boolean, attrs: RequestAttributes, t: number, watermark: number): void {
    const { ctx } = this;
    for (const policy of ctx.book.applicable(attrs)) {
      const { route, subjects } = this.route(policy);
      const value = route.valueOf(attrs);
      if (value === undefined) continue;
      // The window counts the sum of costs: the policy's cost for this route or method, else the event's.
      const cost = policy.costOf(attrs);
      if (route.local) {
        const seen = this.sighting;
        seen.rest = value;
        seen.count = cost;
        seen.timeMs = t;
        seen.watermark = watermark;
        seen.live = live;
        if (observeKeyed(ctx.decider, owner.counts, route, seen, ctx.outbox) === 'late') ctx.metrics.late.inc();
      } else if (live) {
        owner.repartition.add(policy.id, subjects.of(value), t - (t % route.resolutionMs), cost);
      }
    }
    if (!live) return;
    // Geography counts requests, whatever they cost: a country's traffic against its usual traffic.
    // At one-second resolution: plenty for a 1-minute rate, and far fewer entries.
    const second = t - (t % 1000);
    if (attrs.country) owner.repartition.add(GEO_POLICY_ID, this.country.of(attrs.country), second, 1);
    if (attrs.region) owner.repartition.add(GEO_POLICY_ID, this.region.of(attrs.region), second, 1);
  }

  private decoder(): EventsDecoder {
    const policies = this.ctx.book.policies;
    if (this.decoding?.policies !== policies) {
      this.decoding = { policies, decoder: policies.some(readsHeaders) ? this.decoders.withHeaders : this.decoders.withoutHeaders };
    }
    return this.decoding.decoder;
  }

  private route(policy: CompiledPolicy): RouteInStage {
    let known = this.routes.get(policy);
    if (!known) {
      const route = routeOf(policy);
      this.routes.set(policy, (known = { route, subjects: new ScopedText(route.scope) }));
    }
    return known;
  }
}

/** A policy's route, and the subjects of its repartitioned events made once per run of one value. */
interface RouteInStage {
  route: Route;
  subjects: ScopedText;
}

/**
 * `scope + value` for the last value seen, made again only when the value changes: the
 * events of one record mostly share a country, a region, often a user, and handing out
 * the same string also spares the repartition's map its hashing.
 */
class ScopedText {
  private value: string | undefined;
  private text = '';

  constructor(private readonly scope: string) {}

  of(value: string): string {
    if (value !== this.value) {
      this.value = value;
      this.text = this.scope + value;
    }
    return this.text;
  }
}
