/**
 * True at most once per `everyMs`: for log lines an attacker can provoke (a bad
 * record, a refused ban), one per period, with how many were held back since.
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
