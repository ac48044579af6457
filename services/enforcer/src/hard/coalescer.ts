/**
 * Gathers the checks that arrive in one turn of the event loop and hands them out
 * in batches, one per group (a hash slot in a Cluster), so Redis runs one script call
 * for many checks instead of one each. A batch goes as soon as it is full, the
 * rest when the turn ends (setImmediate: after the I/O callbacks of this turn, so
 * the requests read from many sockets at once share a call). I/O-free: `send` and
 * `schedule` are given.
 */
export interface CoalescerOptions<T> {
  /** Most checks in one script call: bounds how long one call holds Redis. */
  maxBatch: number;
  /** Checks of different groups never share a call (different slots in a Cluster). */
  groupOf(item: T): number;
  send(items: T[]): void;
  schedule?(flush: () => void): void;
}

export class Coalescer<T> {
  private readonly open = new Map<number, T[]>();
  private scheduled = false;
  private readonly flushNow = (): void => this.flush();
  private readonly schedule: (flush: () => void) => void;

  constructor(private readonly options: CoalescerOptions<T>) {
    if (!(options.maxBatch >= 1)) throw new RangeError(`maxBatch must be at least 1, got ${options.maxBatch}`);
    this.schedule = options.schedule ?? ((flush) => setImmediate(flush));
  }

  add(item: T): void {
    const group = this.options.groupOf(item);
    let batch = this.open.get(group);
    if (batch === undefined) {
      batch = [];
      this.open.set(group, batch);
    }
    batch.push(item);
    if (batch.length >= this.options.maxBatch) {
      this.open.delete(group);
      this.options.send(batch);
      return;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(this.flushNow);
    }
  }

  /** Sends every open batch now. */
  flush(): void {
    this.scheduled = false;
    if (this.open.size === 0) return;
    const batches = [...this.open.values()];
    this.open.clear();
    for (const batch of batches) this.options.send(batch);
  }
}
