import { DROP_REASONS, type DropReason } from './event-buffer.js';

export type DropCounts = Partial<Record<DropReason, number>>;

/**
 * Gathers drops into one log line per interval at most: during an outage an edge
 * may drop thousands of events a second, and a line for each would flood its logs.
 * Pure: the caller passes the time.
 */
export class DropLog {
  private pending: DropCounts = {};
  private total = 0;
  private lastLineAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly intervalMs: number) {}

  /** Records drops; returns what to log when a line is due. */
  note(reason: DropReason, count: number, nowMs: number): DropCounts | undefined {
    if (count <= 0) return this.due(nowMs);
    this.pending[reason] = (this.pending[reason] ?? 0) + count;
    this.total += count;
    return this.due(nowMs);
  }

  /** The drops not yet logged, once the interval since the last line has passed. */
  due(nowMs: number): DropCounts | undefined {
    if (this.total === 0 || nowMs - this.lastLineAt < this.intervalMs) return undefined;
    const line: DropCounts = {};
    for (const reason of DROP_REASONS) if (this.pending[reason]) line[reason] = this.pending[reason];
    this.pending = {};
    this.total = 0;
    this.lastLineAt = nowMs;
    return line;
  }
}
