import type { NearThreshold } from '@banstream/api';
import type { WindowCount } from '@banstream/schemas';

/**
 * The hot counts the aggregator publishes (counts topic: a subject's count once it
 * reaches a share of its threshold, a tombstone when it cools down), for "who is about
 * to be banned". Bounded: past `capacity` keys a new key is not kept (and counted), so
 * a flood of hot subjects costs a fixed amount of memory. Geographic counts are left out.
 */
export class HotCounts {
  private readonly counts = new Map<string, WindowCount>();
  /** Hot counts not kept because the table was full. */
  dropped = 0;

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.counts.size;
  }

  apply(key: string, count: WindowCount | null): void {
    if (count === null) {
      this.counts.delete(key);
      return;
    }
    if (count.kind !== 'subject' || key.startsWith('geo|') || count.threshold <= 0) return;
    if (count.final) {
      this.counts.delete(key);
      return;
    }
    if (!this.counts.has(key) && this.counts.size >= this.capacity) {
      this.dropped++;
      return;
    }
    this.counts.set(key, count);
  }

  /** The `n` live counts nearest their threshold (highest share first); counts older than their window are dropped. */
  nearest(n: number, nowMs: number): NearThreshold[] {
    const top: NearThreshold[] = [];
    for (const [key, c] of this.counts) {
      if (c.observedAt + c.windowSeconds * 1000 < nowMs) {
        this.counts.delete(key);
        continue;
      }
      const share = c.count / c.threshold;
      if (top.length === n && share <= top[n - 1]!.share) continue;
      const entry = { policyId: c.policyId, subject: c.subject, count: c.count, threshold: c.threshold, share, windowSeconds: c.windowSeconds, observedAt: c.observedAt };
      let i = top.length;
      while (i > 0 && top[i - 1]!.share < share) i--;
      top.splice(i, 0, entry);
      if (top.length > n) top.pop();
    }
    return top;
  }
}
