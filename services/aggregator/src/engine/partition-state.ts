import { HotSubjects } from './hot-subjects.js';
import { WindowCounter } from './window-counter.js';

export interface CountingOptions {
  graceMs: number;
  /** Subjects at or above this share of their threshold are published (0: all). */
  hotShare: number;
  /** Least time between two publications of one subject's count. */
  countIntervalMs: number;
}

/**
 * Everything counted from one input partition. Kept per partition so a revoked
 * partition's state is dropped whole and a re-assigned one is rebuilt from a
 * replay without counting anything twice.
 */
export class PartitionState {
  readonly counter: WindowCounter;
  readonly hot: HotSubjects;
  /** Highest event time seen: this partition's lateness clock. */
  watermark = -Infinity;
  /** Offsets below this were processed before a restart or rebalance: replayed to rebuild state only. */
  resumeAt = 0;

  constructor(readonly partition: number, options: CountingOptions) {
    this.counter = new WindowCounter(options.graceMs);
    this.hot = new HotSubjects(options.hotShare, options.countIntervalMs);
  }

  advance(timeMs: number): number {
    if (timeMs > this.watermark) this.watermark = timeMs;
    return this.watermark;
  }
}
