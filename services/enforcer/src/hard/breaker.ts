export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerOptions {
  /** Consecutive failed calls that open the breaker (default 5). */
  failureThreshold?: number;
  /** How long it stays open before one probe call may go through (default 1000 ms). */
  coolDownMs?: number;
}

/**
 * Keeps a dead or hung Redis from adding its timeout to every request: after
 * `failureThreshold` consecutive failures no call is made for `coolDownMs`; then
 * one probe goes through (half-open), and its outcome closes the breaker or opens
 * it for another cool-down. Pure: time comes from the clock it is given.
 */
export class CircuitBreaker {
  private current: BreakerState = 'closed';
  private failures = 0;
  private openedAt = 0;
  readonly failureThreshold: number;
  readonly coolDownMs: number;

  constructor(
    options: BreakerOptions,
    private readonly clock: () => number,
    private readonly onChange: (to: BreakerState, from: BreakerState) => void = () => undefined,
  ) {
    this.failureThreshold = options.failureThreshold ?? 5;
    this.coolDownMs = options.coolDownMs ?? 1_000;
    if (!(this.failureThreshold >= 1)) throw new RangeError(`breaker failureThreshold must be at least 1, got ${this.failureThreshold}`);
    if (!(this.coolDownMs >= 0)) throw new RangeError(`breaker coolDownMs must not be negative, got ${this.coolDownMs}`);
  }

  get state(): BreakerState {
    return this.current;
  }

  /** True while calls are refused outright: open and still cooling down. Changes nothing. */
  refusing(): boolean {
    return this.current === 'open' && this.clock() - this.openedAt < this.coolDownMs;
  }

  /** May a call go out now? Once the cool-down is over, exactly one probe may, until it is recorded. */
  tryAcquire(): boolean {
    if (this.current === 'closed') return true;
    if (this.current === 'half-open' || this.refusing()) return false;
    this.move('half-open');
    return true;
  }

  recordSuccess(): void {
    this.failures = 0;
    if (this.current !== 'closed') this.move('closed');
  }

  recordFailure(): void {
    this.failures += 1;
    // A failing probe reopens at once; calls that were already out when it opened change nothing.
    if (this.current === 'half-open' || (this.current === 'closed' && this.failures >= this.failureThreshold)) {
      this.openedAt = this.clock();
      this.move('open');
    }
  }

  private move(to: BreakerState): void {
    const from = this.current;
    this.current = to;
    this.onChange(to, from);
  }
}
