/**
 * Merges per-partition streams into one in time order, as they would have met in
 * a live consumer: an item is released only once every partition that is still
 * open has an item queued (or has ended), so nothing earlier can still arrive.
 * Within a partition the order is kept as it is.
 */
export class TimeMerge<T extends { timestamp: number }> {
  private readonly queues = new Map<number, T[]>();
  private readonly heads = new Map<number, number>();
  private readonly open = new Set<number>();

  constructor(partitions: Iterable<number>) {
    for (const p of partitions) {
      this.queues.set(p, []);
      this.heads.set(p, 0);
      this.open.add(p);
    }
  }

  get done(): boolean {
    return this.open.size === 0 && this.queued === 0;
  }

  get queued(): number {
    let n = 0;
    for (const [p, q] of this.queues) n += q.length - this.heads.get(p)!;
    return n;
  }

  queuedIn(partition: number): number {
    return (this.queues.get(partition)?.length ?? 0) - (this.heads.get(partition) ?? 0);
  }

  push(partition: number, item: T): void {
    const q = this.queues.get(partition);
    if (!q || !this.open.has(partition)) throw new Error(`partition ${partition} is not open`);
    q.push(item);
  }

  /** No more items will come from this partition. */
  end(partition: number): void {
    this.open.delete(partition);
  }

  /** Releases every item that can be released now, earliest first (ties: lower partition). */
  *drain(): Generator<T> {
    for (;;) {
      let best: number | undefined;
      let bestTime = Infinity;
      for (const [p, q] of this.queues) {
        const head = this.heads.get(p)!;
        if (head >= q.length) {
          if (this.open.has(p)) return; // this partition may still bring something earlier
          continue;
        }
        if (q[head]!.timestamp < bestTime) {
          best = p;
          bestTime = q[head]!.timestamp;
        }
      }
      if (best === undefined) return;
      const q = this.queues.get(best)!;
      const head = this.heads.get(best)!;
      const item = q[head]!;
      if (head + 1 === q.length) {
        q.length = 0;
        this.heads.set(best, 0);
      } else {
        this.heads.set(best, head + 1);
        if (head > 4096 && head * 2 > q.length) {
          q.splice(0, head + 1);
          this.heads.set(best, 0);
        }
      }
      yield item;
    }
  }
}
