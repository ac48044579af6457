import type { CountryRate, DenialRate, MetricsSource } from '@banstream/api';
import { parseSamples, type Sample } from './prom-text.js';

const EVENTS = 'banstream_aggregator_events_consumed_total';
const DECISIONS = 'banstream_enforcer_decisions_total';
const GEO_RATE = 'banstream_aggregator_geo_rate';
const GEO_BASELINE = 'banstream_aggregator_geo_baseline_rate';
const WANTED = new Set([EVENTS, DECISIONS, GEO_RATE, GEO_BASELINE]);

export interface ScrapeLimits {
  timeoutMs: number;
  maxBytes: number;
}

export interface MetricsView {
  /** Live events counted per second by the aggregators read; null when none answered twice yet. */
  eventsPerSecond: number | null;
  denials: DenialRate[];
  geo: CountryRate[];
  sources: MetricsSource[];
}

export interface Reading {
  at: number;
  samples: Sample[];
}

/**
 * Reads the /metrics of the aggregators and enforcers named in CONTROL_CONSOLE_METRICS_URLS,
 * each read bounded in time and bytes, and turns counters into rates between two reads.
 */
export class MetricsScraper {
  private readonly previous = new Map<string, Reading>();

  constructor(
    private readonly urls: readonly string[],
    private readonly limits: ScrapeLimits,
    private readonly clock: () => number,
  ) {}

  get configured(): boolean {
    return this.urls.length > 0;
  }

  async read(): Promise<MetricsView> {
    const results = await Promise.all(
      this.urls.map(async (url) => {
        try {
          const text = await fetchBounded(new URL('/metrics', url).toString(), this.limits);
          return { url, reading: { at: this.clock(), samples: parseSamples(text, WANTED) } };
        } catch (error) {
          return { url, error: error instanceof Error ? error.message : String(error) };
        }
      }),
    );
    const pairs: { before: Reading; after: Reading }[] = [];
    const latest: Reading[] = [];
    for (const r of results) {
      if (!('reading' in r) || r.reading === undefined) continue;
      const before = this.previous.get(r.url);
      if (before) pairs.push({ before, after: r.reading });
      latest.push(r.reading);
      this.previous.set(r.url, r.reading);
    }
    return {
      ...metricsView(pairs, latest),
      sources: results.map((r) => ('error' in r && r.error !== undefined ? { url: r.url, ok: false, error: r.error } : { url: r.url, ok: true })),
    };
  }
}

/** Rates from pairs of readings of the same sources, and the gauges of the latest readings. Pure. */
export function metricsView(pairs: readonly { before: Reading; after: Reading }[], latest: readonly Reading[]): Omit<MetricsView, 'sources'> {
  let events: number | null = null;
  const denials = new Map<string, number>();
  for (const { before, after } of pairs) {
    const seconds = (after.at - before.at) / 1000;
    if (seconds <= 0) continue;
    const rate = (select: (s: Sample) => string | undefined) => {
      const sums = new Map<string, number>();
      for (const [sign, reading] of [
        [-1, before],
        [1, after],
      ] as const) {
        for (const s of reading.samples) {
          const key = select(s);
          if (key !== undefined) sums.set(key, (sums.get(key) ?? 0) + sign * s.value);
        }
      }
      // A counter that went down was reset (a restart): that source says nothing this time.
      return [...sums].filter(([, d]) => d >= 0).map(([k, d]) => [k, d / seconds] as const);
    };
    for (const [, r] of rate((s) => (s.name === EVENTS && s.labels.replay !== 'true' ? 'events' : undefined))) events = (events ?? 0) + r;
    for (const [source, r] of rate((s) => (s.name === DECISIONS && s.labels.result === 'deny' ? (s.labels.source ?? 'unknown') : undefined))) {
      denials.set(source, (denials.get(source) ?? 0) + r);
    }
  }
  const rates = new Map<string, number>();
  const baselines = new Map<string, number>();
  for (const reading of latest) {
    for (const s of reading.samples) {
      const country = s.labels.country;
      if (country === undefined) continue;
      if (s.name === GEO_RATE) rates.set(country, Math.max(rates.get(country) ?? 0, s.value));
      if (s.name === GEO_BASELINE) baselines.set(country, Math.max(baselines.get(country) ?? 0, s.value));
    }
  }
  return {
    eventsPerSecond: events,
    denials: [...denials].map(([source, perSecond]) => ({ source, perSecond })).sort((a, b) => b.perSecond - a.perSecond),
    geo: [...rates]
      .map(([country, rate]) => ({ country, rate, baseline: baselines.get(country) ?? null }))
      .sort((a, b) => b.rate - a.rate)
      .slice(0, 30),
  };
}

/** A GET whose answer is refused past `maxBytes` or `timeoutMs`. */
async function fetchBounded(url: string, limits: ScrapeLimits): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(limits.timeoutMs), redirect: 'error' });
  if (res.status !== 200 || res.body === null) throw new Error(`answered ${res.status}`);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > limits.maxBytes) {
      await reader.cancel();
      throw new Error(`more than ${limits.maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
