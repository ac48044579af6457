import { counter, type Registry } from '../../metrics/registry.js';

/** The supervisor's own metrics (its workers' are summed beside them); labels are bounded kinds. */
export function supervisorMetrics(registry: Registry) {
  return {
    replaced: counter(registry, { name: 'banstream_worker_replacements_total', help: 'Worker processes that died and were replaced' }),
    stalls: counter(registry, { name: 'banstream_worker_stalls_total', help: 'Workers killed by their watchdog, by kind: stuck on one record (quarantined) or an event loop stuck elsewhere', labelNames: ['kind'] }),
  };
}
