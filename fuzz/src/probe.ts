import { countsOf, type FailureKind, type Tally } from './tally.js';

/** One reader's answer to an input: a value, or what it threw. */
export type Answer<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Times one call (until its promise settles, for an async reader), in nanoseconds. */
async function timed(call: () => unknown): Promise<bigint> {
  const started = process.hrtime.bigint();
  try {
    await call();
  } catch {
    // the answer was taken on the first call
  }
  return process.hrtime.bigint() - started;
}

const RETRIES = 5;
const RETRY_GAP_MS = 20;

/**
 * Runs the readers on one input and keeps the tally: each call is announced to the
 * watchdog first (a reader that never returns is named) and timed. A call over the
 * limit is only a suspect: settle() runs it again, RETRIES times RETRY_GAP_MS apart,
 * and counts it slow only if every run was, so that a thread the machine left waiting
 * (two workers on two shared cores) or a garbage collection does not fail a run.
 */
export class Probe {
  readonly failures: { reader: string; kind: FailureKind; detail: string }[] = [];
  private readonly suspects: { reader: string; call: () => unknown; took: bigint }[] = [];

  constructor(
    readonly tally: Tally,
    private readonly limitNs: bigint,
    private readonly announce: (reader: string) => void = () => {},
  ) {}

  run<T>(reader: string, call: () => T): Answer<T> {
    this.announce(reader);
    countsOf(this.tally, reader).tried++;
    let answer: Answer<T>;
    const started = process.hrtime.bigint();
    try {
      answer = { ok: true, value: call() };
    } catch (error) {
      answer = { ok: false, error };
    }
    const took = process.hrtime.bigint() - started;
    if (took > this.limitNs) this.suspects.push({ reader, call, took });
    return answer;
  }

  /**
   * run(), for a reader whose answer is a promise: timed until it settles, unless
   * `timed` is false (a reference whose speed is not under test).
   */
  async runAsync<T>(reader: string, call: () => Promise<T>, timed = true): Promise<Answer<T>> {
    this.announce(reader);
    countsOf(this.tally, reader).tried++;
    let answer: Answer<T>;
    const started = process.hrtime.bigint();
    try {
      answer = { ok: true, value: await call() };
    } catch (error) {
      answer = { ok: false, error };
    }
    const took = process.hrtime.bigint() - started;
    if (timed && took > this.limitNs) this.suspects.push({ reader, call, took });
    return answer;
  }

  get hasSuspects(): boolean {
    return this.suspects.length > 0;
  }

  /** Times the suspects again, apart; the ones slow every time are failures. */
  async settle(): Promise<void> {
    for (const s of this.suspects.splice(0)) {
      let fastest = s.took;
      for (let i = 0; i < RETRIES && fastest > this.limitNs; i++) {
        await new Promise((resolve) => setTimeout(resolve, RETRY_GAP_MS));
        this.announce(s.reader);
        const took = await timed(s.call);
        if (took < fastest) fastest = took;
      }
      if (fastest > this.limitNs) this.fail(s.reader, 'slow', `took ${(Number(fastest) / 1e6).toFixed(1)} ms at best of ${RETRIES + 1} runs`);
    }
  }

  accepted(reader: string): void {
    countsOf(this.tally, reader).accepted++;
  }

  fail(reader: string, kind: FailureKind, detail: string): void {
    countsOf(this.tally, reader)[kind]++;
    this.failures.push({ reader, kind, detail });
  }
}
