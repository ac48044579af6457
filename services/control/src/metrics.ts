import { counter, type Registry } from '@banstream/platform';

export type ControlMetrics = ReturnType<typeof controlMetrics>;

/** The control service's Prometheus metrics (labels are bounded: actions, statuses, states). */
export function controlMetrics(registry: Registry) {
  return {
    changes: counter(registry, { name: 'banstream_control_changes_total', help: 'Changes written with their audit record, by action (policy.update, ban.add…)', labelNames: ['action'] }),
    denied: counter(registry, { name: 'banstream_control_requests_denied_total', help: 'API requests refused before their handler, by status (401, 403, 429)', labelNames: ['status'] }),
    feedRefreshes: counter(registry, {
      name: 'banstream_control_feed_refreshes_total',
      help: 'Blocklist feed refreshes, scheduled or synced, by outcome (ok, FEED_SOURCE_FAILED, FEED_ADDRESS_REFUSED, FEED_INVALID, FEED_LIFT_REFUSED, failed)',
      labelNames: ['outcome'],
    }),
    backtests: counter(registry, { name: 'banstream_control_backtests_total', help: 'Backtests finished, by state (done, failed)', labelNames: ['state'] }),
  };
}
