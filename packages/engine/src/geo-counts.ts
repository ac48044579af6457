import type { WindowCount } from '@banstream/schemas';
import { HotSubjects, toWindowCount } from './hot-subjects.js';
import type { Outbox } from './outbox.js';
import type { PartitionState } from './partition-state.js';

/** Policy id of the built-in geographic counts (repartition entries and counts records). */
export const GEO_POLICY_ID = 'geo';
const GEO_KEY_PREFIX = `${GEO_POLICY_ID}|`;
const HOUR_MS = 3_600_000;

interface HourCount {
  subject: string;
  hourStart: number;
  count: number;
  sent: number;
}

/**
 * Requests per country and per region: a sliding window count of each (published
 * like a hot subject whatever its size, final when it falls to zero) and a count per
 * UTC hour of the day (`country:FR#h03`, reset when that hour comes round again),
 * which geographic alerting learns its baselines from.
 */
export class GeoCounts {
  private readonly windows: HotSubjects;
  private readonly hours = new Map<string, HourCount>();

  constructor(
    private readonly windowMs: number,
    intervalMs: number,
  ) {
    this.windows = new HotSubjects(0, intervalMs);
  }

  /** Counts at the entry's own time: lateness was judged where the events were read. */
  add(state: PartitionState, subject: string, timeMs: number, count: number): boolean {
    const counted = state.counter.addJoined(GEO_KEY_PREFIX, subject, this.windowMs, timeMs, count, timeMs);
    if (counted.late) return false;
    const key = GEO_KEY_PREFIX + subject;
    this.windows.update(key, GEO_POLICY_ID, subject, this.windowMs, 0, counted.count, timeMs);
    const hourStart = Math.floor(timeMs / HOUR_MS) * HOUR_MS;
    const hourSubject = `${subject}#h${String(new Date(hourStart).getUTCHours()).padStart(2, '0')}`;
    const hour = this.hours.get(hourSubject);
    if (!hour || hour.hourStart < hourStart) this.hours.set(hourSubject, { subject: hourSubject, hourStart, count, sent: -1 });
    else if (hour.hourStart === hourStart) hour.count += count;
    return true;
  }

  /** Publishes changed counts; `atMs` (event time) judges which windows fell to zero. */
  publish(state: PartitionState, nowMs: number, atMs: number, out: Outbox): void {
    const estimate = (e: { key: string }) => state.counter.estimate(e.key, this.windowMs, atMs);
    for (const e of this.windows.cool(atMs, estimate)) {
      out.counts.push({ key: e.key, value: toWindowCount(e, kindOf(e.subject), true) }, { key: e.key, value: null });
    }
    for (const e of this.windows.due(nowMs)) out.counts.push({ key: e.key, value: toWindowCount(e, kindOf(e.subject), false) });
    for (const h of this.hours.values()) {
      if (h.count === h.sent) continue;
      h.sent = h.count;
      out.counts.push({ key: `${GEO_POLICY_ID}|${h.subject}`, value: hourRecord(h) });
    }
  }
}

function kindOf(subject: string): string {
  return subject.startsWith('region:') ? 'region' : 'country';
}

function hourRecord(h: HourCount): WindowCount {
  return {
    policyId: GEO_POLICY_ID,
    subject: h.subject,
    kind: 'hour-of-day',
    count: h.count,
    windowSeconds: 3600,
    threshold: 0,
    observedAt: h.hourStart + HOUR_MS - 1,
    final: false,
  };
}
