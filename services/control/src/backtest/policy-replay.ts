import type { OverThreshold } from '@banstream/api';
import type { Allowlist, CompiledPolicy, RequestAttributes } from '@banstream/core';
import type { Ban } from '@banstream/schemas';
import { BanLedger, LATE, observe, Outbox, partitionFor, PartitionState, RepartitionBuffer, routeOf, type DeciderContext, type Route } from '@banstream/engine';
import { Tally } from './tally.js';

export interface ReplayOptions {
  policy: CompiledPolicy;
  graceMs: number;
  /** Partitions of the aggregator's subjects topic: repartitioned subjects are counted per owner partition, as there. */
  subjectPartitions: number;
  allowlist: Allowlist;
}

const SWEEP_SLOTS = 65_536;

interface Pending {
  subject: string;
  t: number;
  attrs: RequestAttributes;
}

/**
 * One policy replayed over retained events exactly as the aggregator counts and
 * decides it: the same window counter and decision code (observe), subjects local
 * to an events partition counted per events partition in offset order, the others
 * summed per record (RepartitionBuffer) and counted per owner partition at the
 * aggregator's time resolution, bans admitted through a BanLedger. On top it keeps
 * what the aggregator does not: which requests a ban or throttle would have refused.
 */
export class PolicyReplay {
  readonly policy: CompiledPolicy;
  readonly bans: Ban[] = [];
  readonly over = new Map<string, OverThreshold>();
  readonly affected = new Tally();
  /** Requests refused by each ban (by ban id). */
  readonly refusedByBan = new Map<string, number>();
  matched = 0;
  late = 0;
  private readonly route: Route;
  private readonly eventsStates = new Map<number, { counts: PartitionState; repartition: RepartitionBuffer }>();
  private readonly subjectStates = new Map<number, PartitionState>();
  private readonly outbox = new Outbox();
  private readonly ctx: DeciderContext;
  private readonly latestBan = new Map<string, Ban>();
  private pending: Pending[] = [];
  private clockMs = 0;

  constructor(private readonly options: ReplayOptions) {
    this.policy = options.policy;
    this.route = routeOf(options.policy);
    // The replay's "now" is the time each record was written: bans are judged as they were live.
    this.ctx = { ledger: new BanLedger(), allowlist: options.allowlist, nowMs: () => this.clockMs };
  }

  /** Starts an events record (partition, offset, the time it was written). */
  beginRecord(partition: number, offset: number, writtenAt: number): void {
    this.clockMs = writtenAt;
    this.eventsState(partition).repartition.begin(offset);
  }

  /** One checked event of the current record; false if it came too late to count. */
  event(partition: number, attrs: RequestAttributes, eventMs: number): boolean {
    const owner = this.eventsState(partition);
    // Counted at most at the time its record was written, as the aggregator does.
    const t = owner.counts.admit(eventMs, this.clockMs);
    if (t === LATE) {
      this.late++;
      return false;
    }
    const watermark = owner.counts.watermark;
    const { policy } = this;
    const counted = policy.matches(attrs);
    // A status-matched policy counts some responses, but the enforcer applies its ban or
    // throttle to every request of the subject (matchesAtCheck): those are judged, not counted.
    if (!counted && !(policy.byStatus && policy.matchesAtCheck(attrs))) return true;
    const subject = policy.subjectOf(attrs);
    if (subject === undefined || (policy.subjects && !policy.subjects.has(subject))) return true;
    if (!counted) {
      if (this.route.local) this.judge(owner.counts, subject, Math.max(t, watermark), attrs);
      else this.pending.push({ subject, t, attrs });
      return true;
    }
    this.matched++;
    if (this.route.local) {
      if (observe(this.ctx, owner.counts, policy, subject, t, policy.costOf(attrs), watermark, this.outbox) === 'late') this.late++;
      this.collectBans();
      this.judge(owner.counts, subject, Math.max(t, watermark), attrs);
    } else {
      owner.repartition.add(policy.id, subject, t - (t % this.route.resolutionMs), policy.costOf(attrs));
      this.pending.push({ subject, t, attrs });
    }
    return true;
  }

  /** Ends the current record: its repartitioned sums are counted by their owners, as stage two does. */
  endRecord(partition: number): void {
    if (this.route.local) return;
    for (const { partition: owner, batch } of this.eventsState(partition).repartition.take()) {
      const state = this.subjectState(owner);
      for (const e of batch.entries) {
        state.advance(e.timestamp);
        observe(this.ctx, state, this.policy, e.subject, e.timestamp, e.count, e.timestamp, this.outbox);
        this.collectBans();
      }
    }
    for (const p of this.pending) this.judge(this.ownerState(p.subject), p.subject, p.t, p.attrs);
    this.pending = [];
  }

  private judge(state: PartitionState, subject: string, at: number, attrs: RequestAttributes): void {
    const ban = this.latestBan.get(subject);
    if (ban && ban.startedAt < at && at < ban.expiresAt) {
      this.affected.add(attrs, 1);
      this.refusedByBan.set(ban.banId, (this.refusedByBan.get(ban.banId) ?? 0) + 1);
      return;
    }
    const { threshold, action } = this.policy;
    const count = state.counter.estimate(`${this.policy.id}|${subject}`, threshold.intervalMs, at, threshold.count);
    if (count <= threshold.count) return;
    let o = this.over.get(subject);
    if (!o) this.over.set(subject, (o = { subject, firstAt: at, lastAt: at, peakCount: count, requestsOver: 0, refused: 0 }));
    o.lastAt = Math.max(o.lastAt, at);
    o.peakCount = Math.max(o.peakCount, count);
    o.requestsOver++;
    if (action.type === 'throttle') {
      const share = 1 - threshold.count / count;
      o.refused += share;
      this.affected.add(attrs, share);
    }
  }

  private collectBans(): void {
    if (this.outbox.bans.length === 0) return;
    for (const { value } of this.outbox.drain().bans) {
      if (!value) continue;
      this.bans.push(value);
      this.latestBan.set(value.subject, value);
    }
  }

  private eventsState(partition: number) {
    let s = this.eventsStates.get(partition);
    if (!s) {
      s = {
        counts: new PartitionState(partition, { graceMs: this.options.graceMs, hotShare: Infinity, countIntervalMs: 1000 }),
        repartition: new RepartitionBuffer(partition, this.options.subjectPartitions),
      };
      this.eventsStates.set(partition, s);
    }
    return s;
  }

  private subjectState(partition: number): PartitionState {
    let s = this.subjectStates.get(partition);
    if (!s) this.subjectStates.set(partition, (s = new PartitionState(partition, { graceMs: this.options.graceMs, hotShare: Infinity, countIntervalMs: 1000 })));
    return s;
  }

  private ownerState(subject: string): PartitionState {
    return this.subjectState(partitionFor(subject, this.options.subjectPartitions));
  }

  /** Forgets keys idle past their window, as the aggregator's sweep does: memory follows active subjects. */
  sweep(): void {
    for (const s of [...[...this.eventsStates.values()].map((e) => e.counts), ...this.subjectStates.values()]) {
      if (s.watermark > 0) s.counter.evictIdle(s.watermark, SWEEP_SLOTS);
    }
  }
}
