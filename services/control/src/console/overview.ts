import type { Logger } from '@banstream/platform';
import type { ControlState } from '../state/control-state.js';
import type { OverviewSnapshot } from '@banstream/api';
import type { HotCounts } from './hot-counts.js';
import type { MetricsScraper } from './metrics-scrape.js';
import { MinuteCounter } from './minute-counter.js';
import { openAlerts } from './open-alerts.js';

export interface OverviewOptions {
  state: ControlState;
  hot: HotCounts;
  scraper: MetricsScraper;
  /** The events topic's end offsets summed over its partitions. */
  eventsEndOffset(): Promise<number>;
  clock: () => number;
  logger: Logger;
}

/**
 * The Overview's numbers, from what control already reads (the bans, alerts and counts
 * topics, the events topic's offsets) and the services' metrics when configured.
 */
export class Overview {
  readonly bans = new MinuteCounter();
  readonly lifts = new MinuteCounter();
  private lastOffsets: { at: number; total: number } | undefined;

  constructor(private readonly options: OverviewOptions) {}

  /** Called for every record of the bans topic (ban or tombstone) with its Kafka timestamp; replayed old ones fall outside the minute. */
  onBanRecord(lifted: boolean, timestamp: number): void {
    (lifted ? this.lifts : this.bans).add(timestamp, this.options.clock());
  }

  async snapshot(): Promise<OverviewSnapshot> {
    const { state, hot, scraper, clock } = this.options;
    const [records, metrics] = await Promise.all([this.recordRate(), scraper.configured ? scraper.read() : undefined]);
    const now = clock();
    return {
      at: now,
      eventsPerSecond: metrics?.eventsPerSecond ?? null,
      eventRecordsPerSecond: records,
      bansPerMinute: this.bans.lastMinute(now),
      liftsPerMinute: this.lifts.lastMinute(now),
      activeBans: state.bans.size,
      openAlerts: openAlerts(state.alerts({ limit: 1000 }), 50).map((a) => ({ scope: a.scope, code: a.code, at: a.at, currentRate: a.currentRate, baselineRate: a.baselineRate, zScore: a.zScore })),
      nearest: hot.nearest(10, now),
      denials: metrics?.denials ?? [],
      geo: metrics?.geo ?? [],
      sources: metrics?.sources ?? [],
    };
  }

  private async recordRate(): Promise<number | null> {
    try {
      const total = await this.options.eventsEndOffset();
      const at = this.options.clock();
      const before = this.lastOffsets;
      this.lastOffsets = { at, total };
      if (before === undefined || at <= before.at || total < before.total) return null;
      return ((total - before.total) * 1000) / (at - before.at);
    } catch (error) {
      this.options.logger.debug({ err: error }, 'console overview: reading the events offsets failed');
      return null;
    }
  }
}
