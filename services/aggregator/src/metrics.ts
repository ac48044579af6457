import { counter, gauge, histogram, type Registry } from '@banstream/platform';
import type { Drained } from '@banstream/engine';

export type AggregatorMetrics = ReturnType<typeof aggregatorMetrics>;

/** The aggregator's Prometheus metrics; README "Metrics" explains each. */
export function aggregatorMetrics(registry: Registry) {
  return {
    eventsConsumed: counter(registry, { name: 'banstream_aggregator_events_consumed_total', help: 'Request events decoded and counted, replayed ones included', labelNames: ['replay'] }),
    entriesApplied: counter(registry, {
      name: 'banstream_aggregator_subject_entries_applied_total',
      help: 'Repartitioned (policy, subject, time) entries applied; duplicates skipped are not counted',
      labelNames: [],
    }),
    entriesDuplicate: counter(registry, {
      name: 'banstream_aggregator_subject_entries_duplicate_total',
      help: 'Repartitioned entries skipped because an earlier owner already sent them',
      labelNames: [],
    }),
    late: counter(registry, { name: 'banstream_aggregator_late_events_total', help: 'Events older than the grace period behind their partition, not counted', labelNames: [] }),
    dlq: counter(registry, { name: 'banstream_aggregator_dlq_records_total', help: 'Records or events sent to the DLQ, by reason code', labelNames: ['reason'] }),
    slowRecords: counter(registry, {
      name: 'banstream_aggregator_slow_records_total',
      help: 'Input records handled, but in more than AGGREGATOR_RECORD_BUDGET_MS (their effect is applied)',
      labelNames: ['stage'],
    }),
    quarantined: counter(registry, {
      name: 'banstream_aggregator_quarantined_records_total',
      help: 'Input records skipped unhandled because a process stalled on them (dead-lettered once, as RECORD_STALLED)',
      labelNames: ['stage'],
    }),
    bans: counter(registry, { name: 'banstream_aggregator_bans_emitted_total', help: 'Bans published, by policy and preview flag', labelNames: ['policy', 'preview'] }),
    unbans: counter(registry, { name: 'banstream_aggregator_ban_tombstones_total', help: 'Expired bans lifted with a tombstone', labelNames: [] }),
    counts: counter(registry, { name: 'banstream_aggregator_counts_emitted_total', help: 'Window count records published, by kind (final ones included)', labelNames: ['kind'] }),
    policies: gauge(registry, { name: 'banstream_aggregator_policies', help: 'Enabled async policies being counted', labelNames: [] }),
    policyRejected: counter(registry, { name: 'banstream_aggregator_policy_rejected_total', help: 'Policy records that failed validation and were not applied', labelNames: [] }),
    banDelay: histogram(registry, {
      name: 'banstream_aggregator_ban_delay_seconds',
      help: 'From the event time of the crossing event to the ban being published',
      labelNames: [],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
    lag: gauge(registry, { name: 'banstream_aggregator_consumer_lag', help: 'Records behind the high watermark, per stage and partition, as of the last batch', labelNames: ['stage', 'partition'] }),
    stateKeys: gauge(registry, { name: 'banstream_aggregator_state_keys', help: 'Tracked (policy, subject, window) entries', labelNames: ['stage'] }),
    stateBytes: gauge(registry, { name: 'banstream_aggregator_state_bytes', help: 'Bytes of window state (typed arrays)', labelNames: ['stage'] }),
    hotSubjects: gauge(registry, { name: 'banstream_aggregator_hot_subjects', help: 'Subjects whose counts are being published', labelNames: ['stage'] }),
    replaying: gauge(registry, { name: 'banstream_aggregator_partitions_replaying', help: 'Owned partitions still rebuilding state by replay', labelNames: ['stage'] }),
    policyHottest: gauge(registry, POLICY_HOTTEST),
    publicationPending: gauge(registry, PUBLICATION_PENDING),
    outputRefused: counter(registry, {
      name: 'banstream_aggregator_output_refused_total',
      help: 'Records Kafka refused for what they are (too large, invalid), by output topic; dead-lettered, or dropped when the DLQ refused them too',
      labelNames: ['output', 'dead_lettered'],
    }),
    ...geoMetrics(registry),
  };
}

/**
 * Label values must be a bounded set: policy ids, reasons, countries, never a
 * subject, IP or user id (one series each would let an attacker grow Prometheus
 * without bound). So the hottest subjects show as one count per policy, and their
 * names go to a log line (Ticker). The highest of the counts is the right merge
 * across workers (prom-client's cluster aggregation, given here as `aggregator`) and
 * instances (`max by (policy)`), since each subject is counted by one of them.
 */
const POLICY_HOTTEST = {
  name: 'banstream_aggregator_policy_hottest_count',
  labelNames: ['policy'] as const,
  aggregator: 'max' as const,
  help: 'Window count of the policy\'s hottest subject on this instance (hot subjects only; the subjects nearest their threshold are in the log line "hot subjects nearest their threshold")',
};

/** Read when scraped from the source showPendingPublications gave; across workers, the longest. */
const PUBLICATION_PENDING = {
  name: 'banstream_aggregator_publication_pending_seconds',
  labelNames: [] as const,
  aggregator: 'max' as const,
  help: 'How long the oldest publication to Kafka still under way has been at it, retries included (0: none); past AGGREGATOR_PUBLISH_STUCK_MS, /readyz is not ready',
  collect(this: Gauge) {
    const pendingMs = pendingSources.get(this);
    if (pendingMs) this.set(pendingMs() / 1000);
  },
};
type Gauge = ReturnType<typeof gauge>;
const pendingSources = new WeakMap<Gauge, () => number>();

/** Where banstream_aggregator_publication_pending_seconds reads its value (the latest service built on the registry). */
export function showPendingPublications(metrics: AggregatorMetrics, pendingMs: () => number): void {
  pendingSources.set(metrics.publicationPending, pendingMs);
}

/** Sets the hottest count of each policy from the hot entries this instance owns now; a policy without any has no series. */
export function recordHottest(metrics: AggregatorMetrics, entries: Iterable<{ readonly policyId: string; readonly count: number }>): void {
  const hottest = new Map<string, number>();
  for (const e of entries) if (e.count > (hottest.get(e.policyId) ?? -1)) hottest.set(e.policyId, e.count);
  metrics.policyHottest.reset();
  for (const [policy, count] of hottest) metrics.policyHottest.set({ policy }, count);
}

/** How many subjects the "hot subjects nearest their threshold" log line names. */
export const TOP_SUBJECTS = 10;

/** Geographic alerting: README "Geographic alerting". Codes are ISO 3166 countries and regions: a bounded set. */
function geoMetrics(registry: Registry) {
  return {
    geoRequests: counter(registry, { name: 'banstream_aggregator_geo_requests_total', help: 'Requests counted per country (live input, not replays)', labelNames: ['country'] }),
    geoAlerts: counter(registry, { name: 'banstream_aggregator_geo_alerts_total', help: 'Geographic alerts published, by scope and state (fired, resolved)', labelNames: ['scope', 'state'] }),
    geoAlertActive: gauge(registry, { name: 'banstream_aggregator_geo_alert_active', help: '1 for each country or region with an open alert owned by this instance', labelNames: ['scope', 'code'] }),
    geoRate: gauge(registry, { name: 'banstream_aggregator_geo_rate', help: 'Requests per second per country over the geo window, as last judged (event time)', labelNames: ['country'] }),
    geoBaselineRate: gauge(registry, { name: 'banstream_aggregator_geo_baseline_rate', help: 'Learned requests per second per country for the hour of the week last judged', labelNames: ['country'] }),
    geoSubjects: gauge(registry, { name: 'banstream_aggregator_geo_subjects', help: 'Countries and regions watched by this instance', labelNames: [] }),
    geoLearned: counter(registry, { name: 'banstream_aggregator_geo_samples_learned_total', help: 'Rate samples learned into baselines', labelNames: [] }),
    geoRestored: counter(registry, {
      name: 'banstream_aggregator_geo_baselines_restored_total',
      help: 'Countries and regions whose learned state was read back from the baselines topic',
      labelNames: [],
    }),
    webhookDeliveries: counter(registry, {
      name: 'banstream_aggregator_geo_webhook_deliveries_total',
      help: 'Alerts posted to the webhook, by outcome (delivered, failed after every retry or refused)',
      labelNames: ['outcome'],
    }),
    webhookRetries: counter(registry, { name: 'banstream_aggregator_geo_webhook_retries_total', help: 'Webhook requests that failed and were tried again', labelNames: [] }),
  };
}

/** Counts what a publication of decisions put on Kafka. */
export function countPublished(metrics: AggregatorMetrics, drained: Drained): void {
  const now = Date.now();
  for (const b of drained.bans) {
    if (!b.value) continue;
    metrics.bans.inc({ policy: b.value.policyId, preview: String(b.value.preview) });
    metrics.banDelay.observe(Math.max(0, now - b.value.startedAt) / 1000);
  }
  for (const c of drained.counts) if (c.value) metrics.counts.inc({ kind: c.value.kind });
  for (const a of drained.alerts) if (a.value) metrics.geoAlerts.inc({ scope: a.value.scope, state: a.value.state });
}
