/**
 * True at most once per `everyMs`: for log lines an attacker can provoke, one per
 * period, with how many were held back. (The aggregator has its own: services do not
 * import each other.)
 */
export class Occasional {
  private last = -Infinity;
  private held = 0;

  constructor(private readonly everyMs: number) {}

  /** Undefined while held back; else how many were held back since the last one let through. */
  pass(nowMs: number): number | undefined {
    if (nowMs - this.last < this.everyMs) {
      this.held++;
      return undefined;
    }
    this.last = nowMs;
    const held = this.held;
    this.held = 0;
    return held;
  }
}
