import { countsOf, type FailureKind, type Tally } from './tally.js';

/** One reader's answer to an input: a value, or what it threw. */
export type Answer<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Runs the readers on one input and keeps the tally: each call is timed (a decode over
 * the limit is run twice more and counted slow only if every run was: a garbage
 * collection or a busy machine must not fail the run) and announced to the watchdog
 * first, so a reader that never returns is named.
 */
export class Probe {
  readonly failures: { reader: string; kind: FailureKind; detail: string }[] = [];

  constructor(
    readonly tally: Tally,
    private readonly limitNs: bigint,
    private readonly announce: (reader: string) => void = () => {},
  ) {}

  run<T>(reader: string, call: () => T): Answer<T> {
    this.announce(reader);
    countsOf(this.tally, reader).tried++;
    let answer: Answer<T> = { ok: false, error: undefined };
    let fastest = -1n;
    for (let attempt = 0; attempt < 3 && (fastest < 0n || fastest > this.limitNs); attempt++) {
      const started = process.hrtime.bigint();
      try {
        answer = { ok: true, value: call() };
      } catch (error) {
        answer = { ok: false, error };
      }
      const took = process.hrtime.bigint() - started;
      if (fastest < 0n || took < fastest) fastest = took;
    }
    if (fastest > this.limitNs) this.fail(reader, 'slow', `took ${(Number(fastest) / 1e6).toFixed(1)} ms`);
    return answer;
  }

  accepted(reader: string): void {
    countsOf(this.tally, reader).accepted++;
  }

  fail(reader: string, kind: FailureKind, detail: string): void {
    countsOf(this.tally, reader)[kind]++;
    this.failures.push({ reader, kind, detail });
  }
}
