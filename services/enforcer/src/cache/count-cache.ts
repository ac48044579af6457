import type { WindowCount } from '@banstream/schemas';

/**
 * The shared counts the enforcer throttles from, keyed like the counts topic
 * (`policyId|subject`). A final record or a tombstone removes the entry; so does
 * age: a count older than its window says nothing about the current rate (its
 * aggregator may be gone), so it stops applying and is purged.
 */
export class CountCache {
  private readonly counts = new Map<string, WindowCount>();
  /** Entries per policy id: a check skips building a policy's subject while it has none. */
  private readonly perPolicy = new Map<string, number>();

  get size(): number {
    return this.counts.size;
  }

  observe(key: string, count: WindowCount | null): void {
    if (count === null || count.final) this.remove(key);
    else if (!this.counts.has(key)) {
      this.counts.set(key, count);
      const policyId = policyIdOf(key);
      this.perPolicy.set(policyId, (this.perPolicy.get(policyId) ?? 0) + 1);
    } else this.counts.set(key, count);
  }

  /** Whether any subject of the policy has a count here (stale ones included until purged). */
  holds(policyId: string): boolean {
    return this.perPolicy.has(policyId);
  }

  get(policyId: string, subject: string, nowMs: number): WindowCount | undefined {
    // Only hot subjects have a count: with none, no key text is built.
    if (this.counts.size === 0) return undefined;
    const count = this.counts.get(`${policyId}|${subject}`);
    return count && !stale(count, nowMs) ? count : undefined;
  }

  purgeStale(nowMs: number): number {
    let purged = 0;
    for (const [k, c] of this.counts) if (stale(c, nowMs) && this.remove(k)) purged++;
    return purged;
  }

  private remove(key: string): boolean {
    if (!this.counts.delete(key)) return false;
    const policyId = policyIdOf(key);
    const left = (this.perPolicy.get(policyId) ?? 1) - 1;
    if (left > 0) this.perPolicy.set(policyId, left);
    else this.perPolicy.delete(policyId);
    return true;
  }
}

/** The counts topic's key is `policyId|subject`; policy ids hold no `|` (the policy schema's id pattern). */
function policyIdOf(key: string): string {
  const bar = key.indexOf('|');
  return bar < 0 ? key : key.slice(0, bar);
}

function stale(count: WindowCount, nowMs: number): boolean {
  return count.observedAt + count.windowSeconds * 1000 <= nowMs;
}
