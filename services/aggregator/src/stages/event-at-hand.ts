import type { RequestAttributes } from '@banstream/core';
import { readTail, type EventAtHand } from '@banstream/engine';

/**
 * The event being counted, as the evidence of a ban policy's hot subject samples it.
 * One object per stage, moved from event to event: a few field writes per event. The
 * user agent and the edge are read from the record only when an event is sampled, at
 * the position the hand-written reader noted (tails); a record read by avsc has no
 * positions, so its events give the user agent only if headers were decoded.
 */
export class EventInRecord implements EventAtHand {
  attrs: RequestAttributes | undefined;
  record: Buffer | undefined;
  /** Where each event's headers start in `record`; empty when the reader did not note them. */
  readonly tails: number[] = [];
  index = 0;

  get path(): string {
    return this.attrs!.path;
  }

  get method(): string {
    return this.attrs!.method;
  }

  get status(): number | undefined {
    return this.attrs!.status;
  }

  userAgent(): string | undefined {
    return this.tail()?.userAgent ?? this.attrs!.headers['user-agent'];
  }

  edge(): string | undefined {
    return this.tail()?.edge;
  }

  /** Moves to event `index` of `record` (read with `tails` noted, or not). */
  at(record: Buffer, index: number, attrs: RequestAttributes): void {
    this.record = record;
    this.index = index;
    this.attrs = attrs;
  }

  /**
   * Lets go of the record once it is counted: a message's value is a slice of the whole
   * fetch response, which a reference kept here would keep alive.
   */
  release(): void {
    this.record = undefined;
    this.attrs = undefined;
    this.read.record = undefined;
    this.read.tail = undefined;
  }

  private read: { record: Buffer | undefined; index: number; tail: ReturnType<typeof readTail> | undefined } = { record: undefined, index: -1, tail: undefined };

  /** The event's user agent and edge, read once for both. */
  private tail(): ReturnType<typeof readTail> | undefined {
    const at = this.tails[this.index];
    if (at === undefined || this.record === undefined) return undefined;
    const read = this.read;
    if (read.record !== this.record || read.index !== this.index) {
      read.record = this.record;
      read.index = this.index;
      read.tail = readTail(this.record, at);
    }
    return read.tail;
  }
}
