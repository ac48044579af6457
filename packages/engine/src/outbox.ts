import type { Ban, BanHistoryEntry, GeoAlert, GeoBaseline, WindowCount } from '@banstream/schemas';

/** A keyed record to publish; value null is a tombstone. */
export interface Keyed<T> {
  key: string;
  value: T | null;
}

export interface Drained {
  counts: Keyed<WindowCount>[];
  bans: Keyed<Ban>[];
  alerts: Keyed<GeoAlert>[];
  baselines: Keyed<GeoBaseline>[];
  /** Bans placed and expired, for the ban-history topic (keyed by subject). */
  history: Keyed<BanHistoryEntry>[];
}

/** Records decided by the engine and not yet handed to the producer. */
export class Outbox {
  counts: Keyed<WindowCount>[] = [];
  bans: Keyed<Ban>[] = [];
  /** Geographic alerts, keyed by country or region code. */
  alerts: Keyed<GeoAlert>[] = [];
  /** Geographic alerting state, keyed by subject. */
  baselines: Keyed<GeoBaseline>[] = [];
  history: Keyed<BanHistoryEntry>[] = [];

  get size(): number {
    return this.counts.length + this.bans.length + this.alerts.length + this.baselines.length + this.history.length;
  }

  /** Takes everything out, leaving the outbox empty. */
  drain(): Drained {
    const taken = { counts: this.counts, bans: this.bans, alerts: this.alerts, baselines: this.baselines, history: this.history };
    this.counts = [];
    this.bans = [];
    this.alerts = [];
    this.baselines = [];
    this.history = [];
    return taken;
  }
}
