/**
 * The record a process has in hand, in shared memory, so a watchdog thread can see a
 * main thread that no longer answers anything. The main thread writes a few fields
 * and one atomic store per record (not per event: a record is a batch of them), and
 * bumps a beat counter from a timer while its event loop turns.
 *
 * Layout: Int32 [generation, topic, partition, beats], then Float64 [offset, since].
 * The generation is odd while a record is in hand; the plain fields are written
 * before the atomic store that publishes them and read after the atomic load that
 * sees it, and a reader that finds the generation changed meanwhile looks again.
 */
const GENERATION = 0;
const TOPIC = 1;
const PARTITION = 2;
const BEATS = 3;
const OFFSET = 0;
const SINCE = 1;
const INT_BYTES = 16;

export function inHandBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(INT_BYTES + 16);
}

function views(buffer: SharedArrayBuffer): { ints: Int32Array; floats: Float64Array } {
  return { ints: new Int32Array(buffer, 0, 4), floats: new Float64Array(buffer, INT_BYTES, 2) };
}

/** Main-thread side. */
export class InHand {
  private readonly ints: Int32Array;
  private readonly floats: Float64Array;
  private generation = 0;

  constructor(buffer: SharedArrayBuffer) {
    ({ ints: this.ints, floats: this.floats } = views(buffer));
  }

  begin(topic: number, partition: number, offset: number, nowMs: number): void {
    this.ints[TOPIC] = topic;
    this.ints[PARTITION] = partition;
    this.floats[OFFSET] = offset;
    this.floats[SINCE] = nowMs;
    Atomics.store(this.ints, GENERATION, (this.generation = (this.generation + 1) | 1));
  }

  /** Ends the record begun; returns how long it was held. */
  end(nowMs: number): number {
    Atomics.store(this.ints, GENERATION, ++this.generation);
    return nowMs - this.floats[SINCE]!;
  }

  /** The event loop turned. */
  beat(): void {
    Atomics.add(this.ints, BEATS, 1);
  }
}

export interface InHandSnapshot {
  generation: number;
  /** Undefined when no record is in hand. */
  record: { topic: number; partition: number; offset: number; sinceMs: number } | undefined;
  beats: number;
}

/** Watchdog side: a consistent look at the marker. */
export function lookAt(buffer: SharedArrayBuffer): InHandSnapshot {
  const { ints, floats } = views(buffer);
  for (;;) {
    const generation = Atomics.load(ints, GENERATION);
    const beats = Atomics.load(ints, BEATS);
    if ((generation & 1) === 0) return { generation, record: undefined, beats };
    const record = { topic: ints[TOPIC]!, partition: ints[PARTITION]!, offset: floats[OFFSET]!, sinceMs: floats[SINCE]! };
    if (Atomics.load(ints, GENERATION) === generation) return { generation, record, beats };
  }
}

export type Stall = { kind: 'record'; generation: number; topic: number; partition: number; offset: number; heldMs: number } | { kind: 'loop'; silentMs: number };

export interface StallLimits {
  /** Longest a record may be in hand. */
  budgetMs: number;
  /** Longest the event loop may go without a beat while no record is in hand. */
  loopMs: number;
  /**
   * A gap between two looks longer than this means the whole process was stopped
   * (SIGSTOP, a frozen VM): the watchdog thread runs apart from a stuck main thread,
   * so only a pause of both delays it. Such a gap counts against neither limit.
   */
  pauseMs?: number;
}

const DEFAULT_PAUSE_MS = 1_000;

/**
 * What the watchdog concludes from its looks, by its own clock: a record in hand past
 * the budget, or an event loop silent past its limit with no record in hand (a stall
 * elsewhere: nothing to quarantine, but the process makes no progress either).
 */
export class StallJudge {
  private beats = -1;
  private beatSeenAt = 0;
  private lookedAt: number | undefined;
  /** Time the process spent stopped while the current record was in hand. */
  private paused = { generation: -1, ms: 0 };

  constructor(private readonly limits: StallLimits) {}

  look(snapshot: InHandSnapshot, nowMs: number): Stall | undefined {
    const gap = this.lookedAt === undefined ? 0 : nowMs - this.lookedAt;
    this.lookedAt = nowMs;
    const pause = gap > (this.limits.pauseMs ?? DEFAULT_PAUSE_MS) ? gap : 0;
    this.beatSeenAt += pause;
    if (snapshot.beats !== this.beats) {
      this.beats = snapshot.beats;
      this.beatSeenAt = nowMs;
    }
    if (snapshot.generation !== this.paused.generation) this.paused = { generation: snapshot.generation, ms: 0 };
    const r = snapshot.record;
    if (r) {
      // Only the part of the pause after the record was taken in hand.
      this.paused.ms += Math.min(pause, Math.max(0, nowMs - r.sinceMs));
      const heldMs = nowMs - r.sinceMs - this.paused.ms;
      return heldMs > this.limits.budgetMs ? { kind: 'record', generation: snapshot.generation, topic: r.topic, partition: r.partition, offset: r.offset, heldMs } : undefined;
    }
    const silentMs = nowMs - this.beatSeenAt;
    return silentMs > this.limits.loopMs ? { kind: 'loop', silentMs } : undefined;
  }
}
