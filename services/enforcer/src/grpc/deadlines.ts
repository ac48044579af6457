/**
 * A bound on how long a call waits for its decision, whatever deadline its client set
 * (or none): calls are kept in start order, and one timer answers those past the bound.
 * One timer for all rather than one per call, which would cost every check a timer.
 */
export class Deadlines<T> {
  private readonly pending = new Map<T, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly ms: number,
    private readonly late: (entry: T) => void,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.sweep(), Math.max(10, Math.floor(this.ms / 4)));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  add(entry: T): void {
    this.pending.set(entry, this.now());
  }

  /** Whether `entry` is still waiting (so it is the caller's to answer); false once it was answered as late. */
  settle(entry: T): boolean {
    return this.pending.delete(entry);
  }

  get size(): number {
    return this.pending.size;
  }

  /** Answers every call started `ms` or more ago; a Map iterates in insertion order, so the first in time stops it. */
  sweep(): void {
    const limit = this.now() - this.ms;
    for (const [entry, started] of this.pending) {
      if (started > limit) return;
      this.pending.delete(entry);
      this.late(entry);
    }
  }
}
