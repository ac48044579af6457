import type { WindowCount } from '@banstream/schemas';
import type { EvidenceSample } from './evidence.js';

export interface HotEntry {
  /** The counts topic key: `policyId|subject`. */
  readonly key: string;
  readonly policyId: string;
  readonly subject: string;
  readonly windowMs: number;
  readonly threshold: number;
  count: number;
  observedAt: number;
  sentCount: number;
  /** Processing time of the last publication; -Infinity before the first. */
  sentAt: number;
  /** What the subject sent since it turned hot: kept for ban policies only (decider.ts). */
  sample: EvidenceSample | undefined;
}

/**
 * Subjects whose count is at least `share` of their policy's threshold: the ones
 * enforcers need to throttle. Each is published at most once per `intervalMs`,
 * except that crossing the threshold is published at once, and once it cools down
 * (falls under the share) a final record is published and the entry dropped.
 */
export class HotSubjects {
  private readonly entries = new Map<string, HotEntry>();

  constructor(
    private readonly share: number,
    private readonly intervalMs: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  values(): IterableIterator<HotEntry> {
    return this.entries.values();
  }

  /**
   * Whether a count makes its subject hot. Most subjects are far from any threshold: no
   * lookup, and no key text, for them. A hot subject falling under the share is
   * refreshed by cool() instead.
   */
  isHot(count: number, threshold: number): boolean {
    return count !== 0 && count >= this.share * threshold;
  }

  /** Records a hot count; returns the subject's entry (undefined when the count is not hot). */
  update(key: string, policyId: string, subject: string, windowMs: number, threshold: number, count: number, atMs: number): HotEntry | undefined {
    if (!this.isHot(count, threshold)) return undefined;
    let entry = this.entries.get(key);
    if (entry) {
      entry.count = count;
      entry.observedAt = Math.max(entry.observedAt, atMs);
      return entry;
    }
    entry = { key, policyId, subject, windowMs, threshold, count, observedAt: atMs, sentCount: -1, sentAt: -Infinity, sample: undefined };
    this.entries.set(key, entry);
    return entry;
  }

  get(key: string): HotEntry | undefined {
    return this.entries.get(key);
  }

  /** Entries to publish now; marks them sent. */
  due(nowMs: number): HotEntry[] {
    const out: HotEntry[] = [];
    for (const e of this.entries.values()) {
      if (e.count === e.sentCount) continue;
      const crossed = e.sentCount <= e.threshold && e.count > e.threshold;
      if (!crossed && nowMs - e.sentAt < this.intervalMs) continue;
      e.sentCount = e.count;
      e.sentAt = nowMs;
      out.push(e);
    }
    return out;
  }

  /**
   * Re-counts every entry at `atMs` with `estimate` and removes those that cooled
   * down; returns them with their final count.
   */
  cool(atMs: number, estimate: (e: HotEntry) => number): HotEntry[] {
    const cooled: HotEntry[] = [];
    for (const e of this.entries.values()) {
      if (atMs <= e.observedAt) continue;
      const count = estimate(e);
      if (count === 0 || count < this.share * e.threshold) {
        e.count = count;
        e.observedAt = atMs;
        this.entries.delete(e.key);
        cooled.push(e);
      }
    }
    return cooled;
  }
}

export function toWindowCount(e: HotEntry, kind: string, final: boolean): WindowCount {
  return {
    policyId: e.policyId,
    subject: e.subject,
    kind,
    count: e.count,
    windowSeconds: Math.max(1, Math.round(e.windowMs / 1000)),
    threshold: e.threshold,
    observedAt: e.observedAt,
    final,
  };
}

/** The `n` entries with the highest share of their threshold, highest first, without sorting them all. */
export function nearestThreshold(entries: Iterable<HotEntry>, n: number): HotEntry[] {
  const share = (e: HotEntry) => e.count / Math.max(1, e.threshold);
  const top: HotEntry[] = [];
  for (const e of entries) {
    if (top.length === n && share(e) <= share(top[n - 1]!)) continue;
    const at = top.findIndex((t) => share(t) < share(e));
    top.splice(at < 0 ? top.length : at, 0, e);
    if (top.length > n) top.pop();
  }
  return top;
}
