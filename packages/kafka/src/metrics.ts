import { counter, type Registry } from '@banstream/platform';

export type FeedMetrics = ReturnType<typeof feedMetrics>;

/** Metrics of the compacted-topic readers (CompactedFeed); labels are feed names and reason codes, never a record's key. */
export function feedMetrics(registry: Registry) {
  return {
    skipped: counter(registry, {
      name: 'banstream_feed_records_skipped_total',
      help: 'Records of a compacted topic skipped unapplied (their handler threw, an earlier process stalled on them, or their batch could not be read), by feed and reason code',
      labelNames: ['feed', 'reason'],
    }),
    restarts: counter(registry, {
      name: 'banstream_feed_restarts_total',
      help: 'Times a compacted-topic reader was started again after its Kafka consumer stopped on an error the client does not retry, by feed',
      labelNames: ['feed'],
    }),
    slow: counter(registry, { name: 'banstream_feed_slow_records_total', help: 'Records of a compacted topic applied, but slower than the time budget', labelNames: ['feed'] }),
  };
}
