import { Deque } from './deque.js';

/**
 * Why an event was given up, the label of `banstream_edge_events_dropped_total`:
 * - buffer_full: evicted, oldest first, to stay within the memory budget;
 * - too_large: one event larger than the whole budget;
 * - invalid: no partition key (bad IP) or not encodable as a RequestEvent;
 * - rejected: Kafka refused the record for good (too large for the broker, not authorised…);
 * - closed: published after close();
 * - shutdown: still buffered or in flight when close() reached its deadline.
 */
export const DROP_REASONS = ['buffer_full', 'too_large', 'invalid', 'rejected', 'closed', 'shutdown'] as const;
export type DropReason = (typeof DROP_REASONS)[number];

/** One buffered event and its estimated memory. */
export interface Pending<T> {
  readonly value: T;
  readonly bytes: number;
  /** Publication order. */
  readonly seq: number;
}

/**
 * Every event ever published is in exactly one place:
 * published = delivered + dropped (all reasons) + pending + in flight.
 */
export interface BufferStats {
  published: number;
  delivered: number;
  dropped: Record<DropReason, number>;
  /** Events offered all-or-nothing and refused for want of room; never published. */
  refused: number;
  pendingEvents: number;
  pendingBytes: number;
  inFlightEvents: number;
  inFlightBytes: number;
  budgetBytes: number;
}

/**
 * The publisher's accounting, without I/O or clock: a FIFO of pending events, the
 * events handed to Kafka and not yet acknowledged (in flight), and a memory budget
 * that both together never exceed. Pure and synchronous, so every rule is unit-tested.
 */
export class EventBuffer<T> {
  private readonly queue = new Deque<Pending<T>>();
  private nextSeq = 0;
  private readonly counts = {
    published: 0,
    delivered: 0,
    refused: 0,
    pendingBytes: 0,
    inFlightEvents: 0,
    inFlightBytes: 0,
    dropped: Object.fromEntries(DROP_REASONS.map((r) => [r, 0])) as Record<DropReason, number>,
  };

  constructor(readonly budgetBytes: number) {
    if (!(budgetBytes > 0)) throw new RangeError(`budgetBytes must be > 0 (got ${budgetBytes})`);
  }

  get pendingEvents(): number {
    return this.queue.length;
  }

  get pendingBytes(): number {
    return this.counts.pendingBytes;
  }

  get inFlightEvents(): number {
    return this.counts.inFlightEvents;
  }

  get usedBytes(): number {
    return this.counts.pendingBytes + this.counts.inFlightBytes;
  }

  /**
   * Appends one event. Never refuses: when the budget is exceeded the oldest pending
   * events are dropped (`buffer_full`) until it is not. Returns how many were dropped.
   */
  push(value: T, bytes: number): number {
    this.counts.published++;
    if (bytes > this.budgetBytes) {
      this.counts.dropped.too_large++;
      return 0;
    }
    this.queue.push({ value, bytes, seq: this.nextSeq++ });
    this.counts.pendingBytes += bytes;
    let evicted = 0;
    while (this.usedBytes > this.budgetBytes) {
      const oldest = this.queue.shift()!;
      this.counts.pendingBytes -= oldest.bytes;
      evicted++;
    }
    this.counts.dropped.buffer_full += evicted;
    return evicted;
  }

  /**
   * All or nothing, never evicting: appends every event when they all fit in the
   * room left, otherwise appends none and returns false. For callers that can push
   * back (the gateway answers 503) instead of losing events they already accepted.
   */
  offer(values: readonly T[], sizes: readonly number[]): boolean {
    let total = 0;
    for (const size of sizes) total += size;
    if (this.usedBytes + total > this.budgetBytes) {
      this.counts.refused += values.length;
      return false;
    }
    for (let i = 0; i < values.length; i++) {
      this.queue.push({ value: values[i]!, bytes: sizes[i]!, seq: this.nextSeq++ });
      this.counts.pendingBytes += sizes[i]!;
    }
    this.counts.published += values.length;
    return true;
  }

  /** Counts an event that never entered the buffer (published after close, unusable). */
  reject(reason: DropReason, events = 1): void {
    this.counts.published += events;
    this.counts.dropped[reason] += events;
  }

  /**
   * Moves the oldest pending events to in flight: up to `maxEvents`, and up to
   * `maxBytes` except that one event is always taken, so a large one cannot block.
   */
  take(maxEvents: number, maxBytes: number): Pending<T>[] {
    const taken: Pending<T>[] = [];
    let bytes = 0;
    while (taken.length < maxEvents) {
      const next = this.queue.peek();
      if (next === undefined || (taken.length > 0 && bytes + next.bytes > maxBytes)) break;
      this.queue.shift();
      taken.push(next);
      bytes += next.bytes;
    }
    this.counts.pendingBytes -= bytes;
    this.counts.inFlightEvents += taken.length;
    this.counts.inFlightBytes += bytes;
    return taken;
  }

  /** Ends in-flight events: acknowledged by Kafka, or given up for `outcome`. */
  settle(events: readonly Pending<T>[], outcome: 'delivered' | DropReason): void {
    const bytes = sumBytes(events);
    this.counts.inFlightEvents -= events.length;
    this.counts.inFlightBytes -= bytes;
    if (outcome === 'delivered') this.counts.delivered += events.length;
    else this.counts.dropped[outcome] += events.length;
  }

  /** Drops every pending event (not those in flight) for `reason`; returns how many. */
  dropPending(reason: DropReason): number {
    const n = this.queue.length;
    while (this.queue.shift() !== undefined);
    this.counts.pendingBytes = 0;
    this.counts.dropped[reason] += n;
    return n;
  }

  stats(): BufferStats {
    const c = this.counts;
    return {
      published: c.published,
      delivered: c.delivered,
      dropped: { ...c.dropped },
      refused: c.refused,
      pendingEvents: this.queue.length,
      pendingBytes: c.pendingBytes,
      inFlightEvents: c.inFlightEvents,
      inFlightBytes: c.inFlightBytes,
      budgetBytes: this.budgetBytes,
    };
  }
}

function sumBytes(events: readonly Pending<unknown>[]): number {
  let bytes = 0;
  for (const e of events) bytes += e.bytes;
  return bytes;
}
