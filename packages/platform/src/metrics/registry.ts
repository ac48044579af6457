import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export { Registry };

const PREFIX = 'banstream_';
/** prom-client's event-loop group: this gauge's collect sets all eight (min, max, mean, stddev, percentiles). */
const EVENT_LOOP_LAG = `${PREFIX}nodejs_eventloop_lag_seconds`;
/** The event-loop statistics are refreshed at most this often, whatever the scrape interval. */
export const EVENT_LOOP_REFRESH_MS = 1_000;

export interface MetricsRegistryOptions {
  /** Node process metrics (prom-client's defaults); default true. */
  defaultMetrics?: boolean;
  /** Milliseconds, for the event-loop refresh (tests). */
  clock?: () => number;
}

/** A fresh registry per service instance (no global), with Node process metrics. */
export function createMetricsRegistry(service: string, options: MetricsRegistryOptions = {}): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (options.defaultMetrics ?? true) {
    collectDefaultMetrics({ register: registry, prefix: PREFIX });
    refreshEventLoopStatsAtMostEverySecond(registry, options.clock ?? (() => performance.now()));
  }
  return registry;
}

/**
 * Node 20 computes an event-loop histogram's stddev by walking all its buckets: about
 * 0.5 ms a scrape, most of a worker's cost of being scraped. Statistics over at least
 * a second are as useful (Prometheus scrapes every 15 s or so), so between refreshes a
 * scrape reports the last ones and the histogram keeps gathering.
 */
function refreshEventLoopStatsAtMostEverySecond(registry: Registry, clock: () => number): void {
  const lag = registry.getSingleMetric(EVENT_LOOP_LAG) as { collect?: () => unknown } | undefined;
  const collect = lag?.collect;
  if (lag === undefined || typeof collect !== 'function') throw new Error(`prom-client no longer sets ${EVENT_LOOP_LAG} by its collect: see refreshEventLoopStatsAtMostEverySecond`);
  let refreshed = Number.NEGATIVE_INFINITY;
  lag.collect = function refreshAtMostEverySecond(this: unknown) {
    const now = clock();
    if (now - refreshed < EVENT_LOOP_REFRESH_MS) return undefined;
    refreshed = now;
    return collect.call(this);
  };
}

type Labels<L extends string> = { name: string; help: string; labelNames?: readonly L[] };

/**
 * Get-or-create, so two components (or a service built twice in one test) that
 * declare the same metric share it instead of throwing "already registered".
 */
export function counter<L extends string>(registry: Registry, spec: Labels<L>): Counter<L> {
  return (registry.getSingleMetric(spec.name) as Counter<L> | undefined) ?? new Counter({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] });
}

export function gauge<L extends string>(registry: Registry, spec: Labels<L>): Gauge<L> {
  return (registry.getSingleMetric(spec.name) as Gauge<L> | undefined) ?? new Gauge({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] });
}

export function histogram<L extends string>(registry: Registry, spec: Labels<L> & { buckets: number[] }): Histogram<L> {
  return (registry.getSingleMetric(spec.name) as Histogram<L> | undefined) ?? new Histogram({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] });
}

/** A counter's increments for one or two label values, tallied where they happen. */
export interface TallyCounter {
  inc(first: string, second?: string): void;
}

const tallies = new WeakMap<Counter<string>, Map<string, { labels: Record<string, string>; pending: number }>>();

/**
 * A counter for a per-request path: prom-client hashes the labels object on every
 * inc (about half a microsecond with two labels); this tallies in a Map keyed by the
 * label values and hands the sums to prom-client when the counter is read (a scrape
 * or get()), so what Prometheus sees is the same. One or two labels.
 */
export function tallyCounter<L extends string>(registry: Registry, spec: Labels<L> & { labelNames: readonly L[] }): TallyCounter {
  if (spec.labelNames.length < 1 || spec.labelNames.length > 2) throw new Error(`tallyCounter ${spec.name}: one or two labels, not ${spec.labelNames.length}`);
  let metric = registry.getSingleMetric(spec.name) as Counter<L> | undefined;
  if (metric === undefined) {
    const counts = new Map<string, { labels: Record<string, string>; pending: number }>();
    metric = new Counter<L>({
      ...spec,
      registers: [registry],
      collect(this: Counter<L>) {
        for (const entry of counts.values()) {
          if (entry.pending === 0) continue;
          this.inc(entry.labels as Partial<Record<L, string>>, entry.pending);
          entry.pending = 0;
        }
      },
    });
    tallies.set(metric as Counter<string>, counts);
  }
  const counts = tallies.get(metric as Counter<string>);
  if (counts === undefined) throw new Error(`tallyCounter ${spec.name}: already registered as a plain counter`);
  const [firstName, secondName] = spec.labelNames;
  return {
    inc(first, second = '') {
      const key = `${first}\u0000${second}`;
      const entry = counts.get(key);
      if (entry !== undefined) entry.pending++;
      else counts.set(key, { labels: secondName === undefined ? { [firstName!]: first } : { [firstName!]: first, [secondName]: second }, pending: 1 });
    },
  };
}
