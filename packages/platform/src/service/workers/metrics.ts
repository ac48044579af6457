import { Gauge } from 'prom-client';
import { counter, gauge, type Registry } from '../../metrics/registry.js';

/** The supervisor's own metrics (its workers' are summed beside them); labels are bounded kinds. `running` is read when scraped. */
export function supervisorMetrics(registry: Registry, running: () => number) {
  return {
    replaced: counter(registry, { name: 'banstream_worker_replacements_total', help: 'Worker processes that died and were replaced' }),
    stalls: counter(registry, {
      name: 'banstream_worker_stalls_total',
      help: 'Workers killed by their watchdog, by kind: stuck on one record (quarantined) or an event loop stuck elsewhere',
      labelNames: ['kind'],
    }),
    running: new Gauge({
      name: 'banstream_workers_running',
      help: 'Worker processes alive',
      registers: [registry],
      collect() {
        this.set(running());
      },
    }),
    unanswered: gauge(registry, { name: 'banstream_workers_unanswered', help: 'Workers whose metrics are missing from this scrape (dead, restarting or too slow to answer)' }),
  };
}
