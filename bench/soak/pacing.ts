/**
 * A paced sender's schedule: by elapsed time e, rate × e events are due. Each tick
 * sends what is due, at most `maxBurst`, so a sender that fell behind (a GC pause, a
 * busy machine) catches up a little at a time and a sender that cannot keep up shows
 * as a lower achieved rate instead of ever-growing bursts.
 */
export class Pacer {
  private sent = 0;
  /** Events that were due but skipped because the burst cap held them back for too long. */
  private skipped = 0;

  constructor(
    private readonly ratePerS: number,
    private readonly maxBurst: number,
    /** A backlog larger than this many events is dropped from the schedule (reported, not sent). */
    private readonly maxBacklog = maxBurst * 10,
  ) {
    if (!(ratePerS > 0) || !(maxBurst >= 1)) throw new RangeError('pacer: rate and maxBurst must be positive');
  }

  /** How many events to send at `elapsedMs` since the start. */
  take(elapsedMs: number): number {
    const due = Math.floor((this.ratePerS * Math.max(0, elapsedMs)) / 1000) - this.sent - this.skipped;
    if (due <= 0) return 0;
    const backlog = due - this.maxBurst;
    if (backlog > this.maxBacklog) this.skipped += backlog - this.maxBacklog;
    const n = Math.min(due, this.maxBurst);
    this.sent += n;
    return n;
  }

  /** Events handed out so far, and events the schedule gave up on. */
  totals(): { sent: number; skipped: number } {
    return { sent: this.sent, skipped: this.skipped };
  }
}
