/** A subject's count in its window against its policy's threshold. */
export interface NearThreshold {
  policyId: string;
  subject: string;
  count: number;
  threshold: number;
  /** count / threshold: 1 is the threshold. */
  share: number;
  windowSeconds: number;
  observedAt: number;
}

/** Requests the enforcers denied per second, for one source that decided (ban, throttle, hard…). */
export interface DenialRate {
  source: string;
  perSecond: number;
}

/** A country's requests per second over the geo window, and the learned baseline for this hour of the week. */
export interface CountryRate {
  country: string;
  rate: number;
  baseline: number | null;
}

/** One metrics endpoint read for the Overview, and whether it answered. */
export interface MetricsSource {
  url: string;
  ok: boolean;
  error?: string;
}

/** What the console's Overview shows: each `overview` event of the stream at GET /console/events. */
export interface OverviewSnapshot {
  /** When it was made (ms since the epoch, the server's clock). */
  at: number;
  /** Live events counted per second by the aggregators read; null when none answered twice yet. */
  eventsPerSecond: number | null;
  /** Records appended to the events topic per second (each holds up to 500 events of one network): known without any aggregator. */
  eventRecordsPerSecond: number | null;
  bansPerMinute: number;
  liftsPerMinute: number;
  activeBans: number;
  openAlerts: { scope: string; code: string; at: number; currentRate: number; baselineRate: number; zScore: number }[];
  nearest: NearThreshold[];
  denials: DenialRate[];
  geo: CountryRate[];
  /** The metrics sources read; empty when none is configured. */
  sources: MetricsSource[];
}
