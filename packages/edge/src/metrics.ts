import { counter, gauge, histogram, type Registry } from '@banstream/platform';
import { DROP_REASONS, type BufferStats } from './engine/event-buffer.js';

export type EdgeMetrics = ReturnType<typeof edgeMetrics>;

/**
 * The publisher's Prometheus metrics. Counters are not touched per event: publish()
 * must stay cheap, so `sync` adds what the buffer counted since the last call.
 */
export function edgeMetrics(registry: Registry) {
  const m = {
    published: counter(registry, { name: 'banstream_edge_events_published_total', help: 'Events handed to the publisher (publish, or an accepted offer)', labelNames: [] }),
    delivered: counter(registry, { name: 'banstream_edge_events_delivered_total', help: 'Events acknowledged by every in-sync replica', labelNames: [] }),
    dropped: counter(registry, {
      name: 'banstream_edge_events_dropped_total',
      help: 'Events given up, by reason (buffer_full, too_large, invalid, rejected, closed, shutdown)',
      labelNames: ['reason'],
    }),
    refused: counter(registry, { name: 'banstream_edge_events_refused_total', help: 'Events offered all-or-nothing and refused for want of room (the gateway answered 503)', labelNames: [] }),
    bufferBytes: gauge(registry, { name: 'banstream_edge_buffer_bytes', help: 'Estimated memory of buffered and in-flight events', labelNames: [] }),
    bufferEvents: gauge(registry, { name: 'banstream_edge_buffer_events', help: 'Buffered and in-flight events', labelNames: [] }),
    budgetBytes: gauge(registry, { name: 'banstream_edge_buffer_budget_bytes', help: 'Memory budget of the buffer', labelNames: [] }),
    recordEvents: histogram(registry, { name: 'banstream_edge_record_events', help: 'Events per Kafka record (batch size)', labelNames: [], buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] }),
    produceSeconds: histogram(registry, {
      name: 'banstream_edge_produce_seconds',
      help: 'From handing records to the producer to their acknowledgement',
      labelNames: [],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
  };
  let last: BufferStats | undefined;
  return {
    ...m,
    /** Brings counters and gauges up to `stats`. */
    sync(stats: BufferStats): void {
      m.published.inc(stats.published - (last?.published ?? 0));
      m.delivered.inc(stats.delivered - (last?.delivered ?? 0));
      m.refused.inc(stats.refused - (last?.refused ?? 0));
      for (const reason of DROP_REASONS) m.dropped.inc({ reason }, stats.dropped[reason] - (last?.dropped[reason] ?? 0));
      m.bufferBytes.set(stats.pendingBytes + stats.inFlightBytes);
      m.bufferEvents.set(stats.pendingEvents + stats.inFlightEvents);
      m.budgetBytes.set(stats.budgetBytes);
      last = stats;
    },
  };
}
