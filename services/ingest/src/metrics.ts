import { counter, type Registry } from '@banstream/platform';

export type IngestMetrics = ReturnType<typeof ingestMetrics>;

/** The gateway's own metrics; the publisher's (banstream_edge_*) are on the same registry. */
export function ingestMetrics(registry: Registry) {
  return {
    requests: counter(registry, { name: 'banstream_ingest_requests_total', help: 'POST /v1/events requests, by answer status and body format', labelNames: ['status', 'format'] }),
    events: counter(registry, {
      name: 'banstream_ingest_events_total',
      help: 'Events received, by format and outcome (accepted, invalid, refused for want of buffer room)',
      labelNames: ['format', 'outcome'],
    }),
    geo: counter(registry, { name: 'banstream_ingest_geo_total', help: 'Accepted events by geography: filled from the database, kept (the edge gave a country), unknown', labelNames: ['result'] }),
  };
}
