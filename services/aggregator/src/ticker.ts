import type { Allowlist } from '@banstream/core';
import type { Ban } from '@banstream/schemas';
import { emptyReport, eventKeyOfSubject, isPartitionLocal, BanLifter, nearestThreshold, partitionFor, publishCounts, type BanLedger, type HotEntry } from '@banstream/engine';
import { recordHottest, TOP_SUBJECTS } from './metrics.js';
import type { StageContext } from './stages/context.js';
import type { EventsStage } from './stages/events-stage.js';
import type { SubjectsStage } from './stages/subjects-stage.js';

/** Least time between two "hot subjects nearest their threshold" log lines. */
const TOP_SUBJECTS_LOG_MS = 60_000;

/** Slots each window store's idle sweep looks at per second. */
const SWEEP_SLOTS = 65_536;

/**
 * The periodic half of the aggregator: publishes hot counts and cool-downs, the
 * geographic counts, and tombstones for the expired bans this instance owns;
 * sweeps idle keys and refreshes the state gauges. Runs every AGGREGATOR_TICK_MS,
 * never two at once.
 */
export class Ticker {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private lastSweep = 0;
  private lastBaselineFlush = 0;
  private lastTopLog = -Infinity;
  private readonly lifter = new BanLifter();

  constructor(
    private readonly ctx: StageContext,
    private readonly stages: { events: EventsStage; subjects: SubjectsStage },
    private readonly ledger: BanLedger,
    private readonly allowlist: Allowlist,
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = true;
      this.tick(Date.now())
        .catch((error: unknown) => this.ctx.logger.warn({ err: error }, 'publishing counts and expiries failed; retried next tick'))
        .finally(() => (this.running = false));
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async tick(now: number): Promise<void> {
    const { ctx, stages } = this;
    const grace = ctx.config.AGGREGATOR_GRACE_MS;
    // A quiet partition still cools down: event time is at least now minus the grace period.
    const at = (watermark: number) => Math.max(watermark, now - grace);
    for (const s of stages.events.assigned.live()) publishCounts(s.counts, 'subject', now, at(s.counts.watermark), ctx.outbox);
    for (const s of stages.subjects.assigned.live()) {
      publishCounts(s.counts, 'subject', now, at(s.counts.watermark), ctx.outbox);
      s.geo.publish(s.counts, now, at(s.counts.watermark), ctx.outbox);
    }
    if (ctx.geo) this.geo(now);
    if (now - this.lastSweep >= 1000) this.sweep(now);
    // The tombstones of the bans whose history records the last tick published, and the records of those ended since.
    const lifted = this.lifter.lift(this.ledger, now, (b) => this.owns(b), ctx.outbox);
    if (lifted > 0) ctx.metrics.unbans.inc(lifted);
    await ctx.flushDecisions();
  }

  /**
   * Open alerts of countries gone quiet are judged at the wall clock (so they can
   * resolve), and what the detectors learned is written at most every flush interval.
   */
  private geo(now: number): void {
    const { ctx, stages } = this;
    const { AGGREGATOR_GEO_WINDOW_MS: windowMs, AGGREGATOR_GRACE_MS: grace, GEO_BASELINE_FLUSH_MS: flushMs } = ctx.config;
    const report = emptyReport();
    for (const s of stages.subjects.assigned.live()) s.watch?.idle(now, windowMs + grace, ctx.outbox, report);
    ctx.geo?.record(report);
    if (now - this.lastBaselineFlush < flushMs) return;
    this.lastBaselineFlush = now;
    for (const s of stages.subjects.assigned.states()) s.watch?.flush(now, ctx.outbox);
  }

  /** Only the owner of a subject's partition lifts its ban, so no tombstone races a new ban. */
  private owns(ban: Ban): boolean {
    const { ctx, stages } = this;
    const policy = ctx.book.get(ban.policyId);
    if (policy && isPartitionLocal(policy)) {
      const key = eventKeyOfSubject(ban.subject);
      return key !== undefined && stages.events.assigned.has(partitionFor(key, ctx.partitions.events));
    }
    return stages.subjects.assigned.has(partitionFor(ban.subject, ctx.partitions.subjects));
  }

  private sweep(now: number): void {
    const { ctx, stages } = this;
    this.lastSweep = now;
    this.allowlist.purgeExpired(now);
    for (const [name, stage] of [
      ['events', stages.events],
      ['subjects', stages.subjects],
    ] as const) {
      let keys = 0;
      let bytes = 0;
      let hot = 0;
      for (const s of stage.assigned.states()) {
        // By the partition's own event clock, so a replay evicts exactly as the first pass did.
        if (s.counts.watermark > 0) s.counts.counter.evictIdle(s.counts.watermark, SWEEP_SLOTS);
        keys += s.counts.counter.keys;
        bytes += s.counts.counter.bytes;
        hot += s.counts.hot.size;
      }
      ctx.metrics.stateKeys.set({ stage: name }, keys);
      ctx.metrics.stateBytes.set({ stage: name }, bytes);
      ctx.metrics.hotSubjects.set({ stage: name }, hot);
      ctx.metrics.replaying.set({ stage: name }, stage.assigned.replaying);
    }
    this.gauges(now);
  }

  /** Subjects are never metric labels: who is nearest a threshold is logged, at most once a minute. */
  private logTopSubjects(now: number): void {
    if (now - this.lastTopLog < TOP_SUBJECTS_LOG_MS) return;
    const top = nearestThreshold(this.hotEntries(), TOP_SUBJECTS);
    if (top.length === 0) return;
    this.lastTopLog = now;
    this.ctx.logger.info({ top: top.map((e) => ({ policy: e.policyId, subject: e.subject, count: e.count, threshold: e.threshold })) }, 'hot subjects nearest their threshold');
  }

  private *hotEntries(): Generator<HotEntry> {
    for (const stage of [this.stages.events, this.stages.subjects]) for (const s of stage.assigned.states()) yield* s.counts.hot.values();
  }

  /** Gauges rebuilt from what this instance owns now, so nothing a rebalance took away lingers. */
  private gauges(now: number): void {
    const { metrics } = this.ctx;
    this.logTopSubjects(now);
    recordHottest(metrics, this.hotEntries());
    metrics.geoAlertActive.reset();
    metrics.geoRate.reset();
    metrics.geoBaselineRate.reset();
    let watched = 0;
    for (const s of this.stages.subjects.assigned.states()) {
      if (!s.watch) continue;
      watched += s.watch.size;
      for (const w of s.watch.values()) {
        if (w.detector.firing) metrics.geoAlertActive.set({ scope: w.scope, code: w.code }, 1);
        const last = w.detector.last;
        if (w.scope !== 'country' || !last) continue;
        metrics.geoRate.set({ country: w.code }, last.rate);
        metrics.geoBaselineRate.set({ country: w.code }, last.baselineRate);
      }
    }
    metrics.geoSubjects.set(watched);
  }
}
