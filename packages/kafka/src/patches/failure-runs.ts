/**
 * Failures of one kind, per object (a consumer group, an offset manager), taken in runs: a
 * failure more than `gapMs` after the last one starts a new run. The patches that meet a
 * failover's failures their own way for a while (leader-move-fetch-fix, coordinator-move-fix)
 * hand them to kafkajs once a run has lasted too long.
 */
export class FailureRuns {
  private readonly runs = new WeakMap<object, { since: number; last: number }>();

  constructor(private readonly gapMs: number) {}

  /** Notes a failure of `owner` at `at`; returns how long its run has lasted (0: a new run). */
  failed(owner: object, at: number): number {
    let run = this.runs.get(owner);
    if (!run || at - run.last > this.gapMs) this.runs.set(owner, (run = { since: at, last: at }));
    run.last = at;
    return at - run.since;
  }

  /** Moves `owner`'s last failure to `at`, the end of its handling: a slow handling does not split one run in two. */
  handled(owner: object, at: number): void {
    const run = this.runs.get(owner);
    if (run) run.last = at;
  }
}
