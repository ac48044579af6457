import type { WindowCount } from '@banstream/schemas';

/**
 * The shared counts the enforcer throttles from, keyed like the counts topic
 * (`policyId|subject`). A final record or a tombstone removes the entry; so does
 * age: a count older than its window says nothing about the current rate (its
 * aggregator may be gone), so it stops applying and is purged.
 */
export class CountCache {
  private readonly counts = new Map<string, WindowCount>();

  get size(): number {
    return this.counts.size;
  }

  observe(key: string, count: WindowCount | null): void {
    if (count === null || count.final) this.counts.delete(key);
    else this.counts.set(key, count);
  }

  get(policyId: string, subject: string, nowMs: number): WindowCount | undefined {
    // Only hot subjects have a count: with none, no key text is built.
    if (this.counts.size === 0) return undefined;
    const count = this.counts.get(`${policyId}|${subject}`);
    return count && !stale(count, nowMs) ? count : undefined;
  }

  purgeStale(nowMs: number): number {
    let purged = 0;
    for (const [k, c] of this.counts) if (stale(c, nowMs) && this.counts.delete(k)) purged++;
    return purged;
  }
}

function stale(count: WindowCount, nowMs: number): boolean {
  return count.observedAt + count.windowSeconds * 1000 <= nowMs;
}
