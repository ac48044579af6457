/**
 * How many things happened in the last minute, in per-second buckets: bounded memory
 * whatever the rate, and a time given by the caller (a record's timestamp, the clock).
 * Times outside the last minute, or in the future, are not counted.
 */
export class MinuteCounter {
  private readonly buckets = new Float64Array(60);
  /** The second (since the epoch) each bucket holds, so a stale bucket reads as 0. */
  private readonly seconds = new Float64Array(60).fill(-1);

  add(atMs: number, nowMs: number, n = 1): void {
    const second = Math.floor(atMs / 1000);
    const now = Math.floor(nowMs / 1000);
    if (second > now || second <= now - 60) return;
    const i = second % 60;
    if (this.seconds[i] !== second) {
      this.seconds[i] = second;
      this.buckets[i] = 0;
    }
    this.buckets[i]! += n;
  }

  /** Things in the 60 s up to now. */
  lastMinute(nowMs: number): number {
    const now = Math.floor(nowMs / 1000);
    let total = 0;
    for (let i = 0; i < 60; i++) if (this.seconds[i]! > now - 60 && this.seconds[i]! <= now) total += this.buckets[i]!;
    return total;
  }
}
