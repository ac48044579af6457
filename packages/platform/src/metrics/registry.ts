import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export { Registry };

/** A fresh registry per service instance (no global), with Node process metrics. */
export function createMetricsRegistry(service: string, options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'banstream_' });
  return registry;
}

type Labels<L extends string> = { name: string; help: string; labelNames?: readonly L[] };

/**
 * Get-or-create, so two components (or a service built twice in one test) that
 * declare the same metric share it instead of throwing "already registered".
 */
export function counter<L extends string>(registry: Registry, spec: Labels<L>): Counter<L> {
  return (registry.getSingleMetric(spec.name) as Counter<L> | undefined) ??
    new Counter({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] });
}

export function gauge<L extends string>(registry: Registry, spec: Labels<L>): Gauge<L> {
  return (registry.getSingleMetric(spec.name) as Gauge<L> | undefined) ??
    new Gauge({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] });
}

export function histogram<L extends string>(registry: Registry, spec: Labels<L> & { buckets: number[] }): Histogram<L> {
  return (registry.getSingleMetric(spec.name) as Histogram<L> | undefined) ??
    new Histogram({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] });
}
