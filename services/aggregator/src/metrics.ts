import { counter, gauge, histogram, type Registry } from '@banstream/platform';

export type AggregatorMetrics = ReturnType<typeof aggregatorMetrics>;

/** The aggregator's Prometheus metrics; README "Metrics" explains each. */
export function aggregatorMetrics(registry: Registry) {
  return {
    eventsConsumed: counter(registry, { name: 'banstream_aggregator_events_consumed_total', help: 'Request events decoded and counted, replayed ones included', labelNames: ['replay'] }),
    entriesApplied: counter(registry, { name: 'banstream_aggregator_subject_entries_applied_total', help: 'Repartitioned (policy, subject, time) entries applied; duplicates skipped are not counted', labelNames: [] }),
    entriesDuplicate: counter(registry, { name: 'banstream_aggregator_subject_entries_duplicate_total', help: 'Repartitioned entries skipped because an earlier owner already sent them', labelNames: [] }),
    late: counter(registry, { name: 'banstream_aggregator_late_events_total', help: 'Events older than the grace period behind their partition, not counted', labelNames: [] }),
    dlq: counter(registry, { name: 'banstream_aggregator_dlq_records_total', help: 'Records or events sent to the DLQ, by reason code', labelNames: ['reason'] }),
    bans: counter(registry, { name: 'banstream_aggregator_bans_emitted_total', help: 'Bans published, by policy and preview flag', labelNames: ['policy', 'preview'] }),
    unbans: counter(registry, { name: 'banstream_aggregator_ban_tombstones_total', help: 'Expired bans lifted with a tombstone', labelNames: [] }),
    counts: counter(registry, { name: 'banstream_aggregator_counts_emitted_total', help: 'Window count records published, by kind (final ones included)', labelNames: ['kind'] }),
    policies: gauge(registry, { name: 'banstream_aggregator_policies', help: 'Enabled async policies being counted', labelNames: [] }),
    policyRejected: counter(registry, { name: 'banstream_aggregator_policy_rejected_total', help: 'Policy records that failed validation and were not applied', labelNames: [] }),
    banDelay: histogram(registry, {
      name: 'banstream_aggregator_ban_delay_seconds', help: 'From the event time of the crossing event to the ban being published', labelNames: [],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
    lag: gauge(registry, { name: 'banstream_aggregator_consumer_lag', help: 'Records behind the high watermark, per stage and partition, as of the last batch', labelNames: ['stage', 'partition'] }),
    stateKeys: gauge(registry, { name: 'banstream_aggregator_state_keys', help: 'Tracked (policy, subject, window) entries', labelNames: ['stage'] }),
    stateBytes: gauge(registry, { name: 'banstream_aggregator_state_bytes', help: 'Bytes of window state (typed arrays)', labelNames: ['stage'] }),
    hotSubjects: gauge(registry, { name: 'banstream_aggregator_hot_subjects', help: 'Subjects whose counts are being published', labelNames: ['stage'] }),
    replaying: gauge(registry, { name: 'banstream_aggregator_partitions_replaying', help: 'Owned partitions still rebuilding state by replay', labelNames: ['stage'] }),
  };
}
