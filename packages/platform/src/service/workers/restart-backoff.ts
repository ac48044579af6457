/**
 * When to replace a worker process that died. A worker that crashes at once (a
 * broker it cannot reach, a bug hit on its first record) would otherwise be
 * restarted in a tight loop: each quick death in a row doubles the wait, up to a
 * cap; a worker that ran long enough resets the count.
 */
export interface RestartBackoffOptions {
  /** Wait before the first replacement. */
  firstMs: number;
  maxMs: number;
  /** A worker that ran at least this long was healthy: its death starts afresh. */
  healthyAfterMs: number;
}

export const DEFAULT_RESTART_BACKOFF: RestartBackoffOptions = { firstMs: 1_000, maxMs: 30_000, healthyAfterMs: 60_000 };

export class RestartBackoff {
  private quickDeaths = 0;

  constructor(private readonly options: RestartBackoffOptions = DEFAULT_RESTART_BACKOFF) {}

  /** The wait before replacing a worker that ran `livedMs`. */
  next(livedMs: number): number {
    this.quickDeaths = livedMs >= this.options.healthyAfterMs ? 1 : this.quickDeaths + 1;
    return Math.min(this.options.maxMs, this.options.firstMs * 2 ** (this.quickDeaths - 1));
  }
}
