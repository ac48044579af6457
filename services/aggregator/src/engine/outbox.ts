import type { Ban, WindowCount } from '@banstream/schemas';

/** A keyed record to publish; value null is a tombstone. */
export interface Keyed<T> {
  key: string;
  value: T | null;
}

/** Records decided by the engine and not yet handed to the producer. */
export class Outbox {
  counts: Keyed<WindowCount>[] = [];
  bans: Keyed<Ban>[] = [];

  get size(): number {
    return this.counts.length + this.bans.length;
  }

  /** Takes everything out, leaving the outbox empty. */
  drain(): { counts: Keyed<WindowCount>[]; bans: Keyed<Ban>[] } {
    const taken = { counts: this.counts, bans: this.bans };
    this.counts = [];
    this.bans = [];
    return taken;
  }
}
