import { countedAt } from './event-time.js';
import { HotSubjects } from './hot-subjects.js';
import { WindowCounter } from './window-counter.js';

export interface CountingOptions {
  graceMs: number;
  /** Subjects at or above this share of their threshold are published (0: all). */
  hotShare: number;
  /** Least time between two publications of one subject's count. */
  countIntervalMs: number;
}

/** What admit() returns for an event too old to count. */
export const LATE = -1;

/**
 * Everything counted from one input partition. Kept per partition so a revoked
 * partition's state is dropped whole and a re-assigned one is rebuilt from a
 * replay without counting anything twice.
 */
export class PartitionState {
  readonly counter: WindowCounter;
  readonly hot: HotSubjects;
  /** Highest time counted: this partition's lateness clock, never past a receiving time (event-time.ts). */
  watermark = -Infinity;
  /** Offsets below this were processed before a restart or rebalance: replayed to rebuild state only. */
  resumeAt = 0;
  private readonly graceMs: number;

  constructor(
    readonly partition: number,
    options: CountingOptions,
  ) {
    this.graceMs = options.graceMs;
    this.counter = new WindowCounter(options.graceMs);
    this.hot = new HotSubjects(options.hotShare, options.countIntervalMs);
  }

  /**
   * The time an event of a record received at `receivedMs` is counted at (countedAt),
   * with this partition's clock moved there; LATE when that is more than the grace
   * period behind the clock.
   */
  admit(eventMs: number, receivedMs: number): number {
    const t = countedAt(eventMs, receivedMs);
    if (t < this.watermark - this.graceMs) return LATE;
    if (t > this.watermark) this.watermark = t;
    return t;
  }

  /** Moves the clock to `timeMs`, never back: for times already bounded by countedAt (stage two). */
  advance(timeMs: number): number {
    if (timeMs > this.watermark) this.watermark = timeMs;
    return this.watermark;
  }
}
