import type { BacktestReport, PolicyOutcome } from '@banstream/api';
import type { Allowlist, CompiledPolicy } from '@banstream/core';
import { checkEvent, type CountedEvent } from '@banstream/engine';
import { PolicyReplay } from './policy-replay.js';
import { top } from './tally.js';

export interface BacktestInput {
  candidate: CompiledPolicy;
  /** The version of the same policy on the policies topic, replayed alongside for comparison. */
  active?: { policy: CompiledPolicy; version: number };
  graceMs: number;
  maxFutureMs: number;
  subjectPartitions: number;
  allowlist: Allowlist;
  /** Most subjects listed per section (all are counted). */
  listLimit?: number;
}

const SWEEP_EVERY_RECORDS = 2_000;

/**
 * Replays events records through a candidate policy (and the active version of it,
 * if any) and reports what each would have done. Records must come in the order a
 * live consumer meets them: offset order within a partition (TimeMerge across them).
 * Events are checked as the aggregator checks them, against the time each record
 * was written instead of the aggregator's clock.
 */
export class Backtest {
  records = 0;
  events = 0;
  invalid = 0;
  /** Records that could not be decoded (the aggregator sends them to the DLQ). */
  undecodable = 0;
  private readonly clients = new Set<string>();
  private readonly replays: PolicyReplay[];

  constructor(private readonly input: BacktestInput) {
    const replay = (policy: CompiledPolicy) => new PolicyReplay({ policy, graceMs: input.graceMs, subjectPartitions: input.subjectPartitions, allowlist: input.allowlist });
    this.replays = [replay(input.candidate), ...(input.active ? [replay(input.active.policy)] : [])];
  }

  record(partition: number, offset: number, writtenAt: number, events: readonly CountedEvent[]): void {
    this.records++;
    for (const r of this.replays) r.beginRecord(partition, offset, writtenAt);
    for (const event of events) {
      const checked = checkEvent(event, writtenAt, this.input.maxFutureMs);
      if (!checked.ok) {
        this.invalid++;
        continue;
      }
      this.events++;
      this.clients.add(checked.attrs.ip);
      for (const r of this.replays) r.event(partition, checked.attrs, event.timestamp);
    }
    for (const r of this.replays) r.endRecord(partition);
    if (this.records % SWEEP_EVERY_RECORDS === 0) for (const r of this.replays) r.sweep();
  }

  report(range: { from: number; to: number }): BacktestReport {
    const limit = this.input.listLimit ?? 100;
    const [candidate, active] = this.replays.map((r, i) => this.outcome(r, limit, i === 1 ? this.input.active?.version : undefined));
    const report: BacktestReport = {
      range,
      records: this.records,
      events: this.events,
      invalidEvents: this.invalid,
      undecodableRecords: this.undecodable,
      clients: this.clients.size,
      candidate: candidate!,
    };
    if (!active) return report;
    const banned = (o: PolicyReplay) => new Set(o.bans.map((b) => b.subject));
    const [c, a] = [banned(this.replays[0]!), banned(this.replays[1]!)];
    const [co, ao] = [new Set(this.replays[0]!.over.keys()), new Set(this.replays[1]!.over.keys())];
    const only = (x: Set<string>, y: Set<string>) =>
      [...x]
        .filter((s) => !y.has(s))
        .sort()
        .slice(0, limit);
    return {
      ...report,
      active,
      comparison: {
        bannedOnlyByCandidate: only(c, a),
        bannedOnlyByActive: only(a, c),
        bannedByBoth: [...c].filter((s) => a.has(s)).length,
        overOnlyByCandidate: only(co, ao),
        overOnlyByActive: only(ao, co),
        affectedRequestsDelta: round(candidate!.affected.requests - active.affected.requests),
      },
    };
  }

  private outcome(r: PolicyReplay, limit: number, version: number | undefined): PolicyOutcome {
    const { policy } = r;
    const share = (n: number, of: number) => (of === 0 ? 0 : round(n / of, 6));
    return {
      policyId: policy.id,
      ...(version === undefined ? {} : { version }),
      mode: policy.mode,
      action: policy.action.type,
      matched: r.matched,
      late: r.late,
      bans: {
        total: r.bans.length,
        subjects: new Set(r.bans.map((b) => b.subject)).size,
        list: r.bans.slice(0, limit).map((b) => ({
          subject: b.subject,
          startedAt: b.startedAt,
          expiresAt: b.expiresAt,
          evidenceCount: b.evidenceCount,
          escalationLevel: b.escalationLevel,
          preview: b.preview,
          refused: r.refusedByBan.get(b.banId) ?? 0,
        })),
      },
      overThreshold: {
        total: r.over.size,
        list: [...r.over.values()]
          .sort((x, y) => y.refused - x.refused || y.requestsOver - x.requestsOver)
          .slice(0, limit)
          .map((o) => ({ ...o, peakCount: round(o.peakCount), refused: round(o.refused) })),
      },
      affected: {
        requests: round(r.affected.requests),
        requestShare: share(r.affected.requests, this.events),
        clients: r.affected.clients.size,
        clientShare: share(r.affected.clients.size, this.clients.size),
      },
      topCountries: top(r.affected.countries, 10),
      topPrefixes: top(r.affected.prefixes, 10),
    };
  }
}

function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
