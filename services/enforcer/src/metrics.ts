import { counter, gauge, histogram, tallyCounter, type Registry } from '@banstream/platform';

export type EnforcerMetrics = ReturnType<typeof enforcerMetrics>;

/** The enforcer's Prometheus metrics (the hard-limit module adds its own Redis metrics). */
export function enforcerMetrics(registry: Registry) {
  return {
    // Once per check: tallied, not hashed by prom-client each time (tallyCounter).
    decisions: tallyCounter(registry, { name: 'banstream_enforcer_decisions_total', help: 'Decisions by the source that decided and the result', labelNames: ['source', 'result'] }),
    previewDenies: counter(registry, { name: 'banstream_enforcer_preview_denies_total', help: 'Requests a preview policy or ban would have denied, by policy', labelNames: ['policy'] }),
    cacheEntries: gauge(registry, { name: 'banstream_enforcer_cache_entries', help: 'Entries in the local caches', labelNames: ['cache'] }),
    bansRefused: counter(registry, {
      name: 'banstream_enforcer_bans_refused_total',
      help: 'Bans not applied because the ban cache held ENFORCER_MAX_BANS bans (manual bans are never refused)',
      labelNames: [],
    }),
    bansMax: gauge(registry, { name: 'banstream_enforcer_bans_max', help: 'ENFORCER_MAX_BANS: the most bans the ban cache holds before it refuses new ones', labelNames: [] }),
    feedLag: histogram(registry, {
      name: 'banstream_enforcer_feed_lag_seconds',
      help: 'From a record being produced to it being applied here, per feed',
      labelNames: ['feed'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    }),
    // Set by the sidecar (http/auth-gaps.ts): a bounded label, the scope's kind, never its value.
    authUnenforceable: gauge(registry, {
      name: 'banstream_enforcer_auth_unenforceable',
      labelNames: ['scope', 'kind'],
      help: 'Bans and enabled policies GET /v1/auth cannot apply, as no header gives it their scope (ENFORCER_COUNTRY_HEADER…), by scope kind (country, region, asn, route) and kind (ban, policy)',
    }),
    rejectedPolicies: counter(registry, { name: 'banstream_enforcer_policy_rejected_total', help: 'Policy records that failed validation and were not applied', labelNames: [] }),
  };
}
