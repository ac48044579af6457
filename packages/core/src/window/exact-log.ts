/**
 * Exact sliding log: the reference the approximate store is measured against (property
 * tests, bench/accuracy). Per key, the event times in order with a running total, so
 * "how many in (at - W, at]" is two binary searches, whatever the rate. Memory grows
 * with the events kept — the reason the real store does not work this way.
 */

interface KeyLog {
  /** Event times, ascending; entries before `head` are dropped. */
  times: number[];
  /** cum[i] = total count of events up to and including i, counting compacted ones. */
  cum: number[];
  head: number;
  /** Total count of the events compacted away (what precedes index 0). */
  base: number;
}

export interface ExactSlidingLogOptions {
  windowMs: number;
  /**
   * Keep events this long beyond the window behind the newest event of their key, for
   * late events and queries in the past. Default: keep everything.
   */
  retainMs?: number;
}

export class ExactSlidingLog {
  readonly windowMs: number;
  private readonly retainMs: number;
  private readonly logs = new Map<string, KeyLog>();

  constructor(options: ExactSlidingLogOptions) {
    this.windowMs = options.windowMs;
    this.retainMs = options.retainMs ?? Infinity;
  }

  get size(): number {
    return this.logs.size;
  }

  keys(): IterableIterator<string> {
    return this.logs.keys();
  }

  add(key: string, eventTimeMs: number, count = 1): void {
    if (count <= 0) return;
    let log = this.logs.get(key);
    if (log === undefined) {
      log = { times: [], cum: [], head: 0, base: 0 };
      this.logs.set(key, log);
    }
    const { times, cum } = log;
    const last = times.length - 1;
    if (last < 0 || times[last]! <= eventTimeMs) {
      times.push(eventTimeMs);
      cum.push((last < 0 ? log.base : cum[last]!) + count);
    } else {
      // Out of order (a late event): insert in place and shift the running totals.
      const at = upperBound(times, eventTimeMs, log.head);
      const before = at === 0 ? log.base : cum[at - 1]!;
      times.splice(at, 0, eventTimeMs);
      cum.splice(at, 0, before + count);
      for (let i = at + 1; i < cum.length; i++) cum[i]! += count;
    }
    if (this.retainMs !== Infinity) this.drop(log, times[times.length - 1]! - this.windowMs - this.retainMs);
  }

  /** Events in (atMs - W, atMs]. */
  count(key: string, atMs: number): number {
    return this.countBetween(key, atMs - this.windowMs + 1, atMs);
  }

  /** Events with fromMs <= time <= toMs. */
  countBetween(key: string, fromMs: number, toMs: number): number {
    const log = this.logs.get(key);
    if (log === undefined || toMs < fromMs) return 0;
    const i = lowerBound(log.times, fromMs, log.head);
    const j = upperBound(log.times, toMs, log.head);
    if (j <= i) return 0;
    return log.cum[j - 1]! - (i === 0 ? log.base : log.cum[i - 1]!);
  }

  /** Time of the newest event of `key`, or undefined. */
  newest(key: string): number | undefined {
    const log = this.logs.get(key);
    return log === undefined || log.times.length === log.head ? undefined : log.times[log.times.length - 1];
  }

  delete(key: string): boolean {
    return this.logs.delete(key);
  }

  /** Drops events before `beforeMs`; compacts once half the array is dead. */
  private drop(log: KeyLog, beforeMs: number): void {
    const { times } = log;
    while (log.head < times.length && times[log.head]! < beforeMs) log.head++;
    if (log.head > 64 && log.head * 2 > times.length) {
      log.base = log.cum[log.head - 1]!;
      times.splice(0, log.head);
      log.cum.splice(0, log.head);
      log.head = 0;
    }
  }
}

/** First index >= from with times[index] >= value. */
function lowerBound(times: number[], value: number, from: number): number {
  let lo = from;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index >= from with times[index] > value. */
function upperBound(times: number[], value: number, from: number): number {
  let lo = from;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[mid]! <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
