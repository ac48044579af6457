import type { Allowlist } from '@banstream/core';
import type { Ban } from '@banstream/schemas';
import type { BanLedger } from './engine/ban-ledger.js';
import { publishCounts } from './engine/decider.js';
import { eventKeyOfSubject, isPartitionLocal, partitionFor } from './engine/routing.js';
import type { StageContext } from './stages/context.js';
import type { EventsStage } from './stages/events-stage.js';
import type { SubjectsStage } from './stages/subjects-stage.js';

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
    for (const ban of this.ledger.takeExpired(now, (b) => this.owns(b))) {
      ctx.outbox.bans.push({ key: ban.subject, value: null });
      ctx.metrics.unbans.inc();
    }
    if (now - this.lastSweep >= 1000) this.sweep(now);
    await ctx.flushDecisions();
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
    for (const [name, stage] of [['events', stages.events], ['subjects', stages.subjects]] as const) {
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
  }
}
