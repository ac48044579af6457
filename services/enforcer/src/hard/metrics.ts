import { counter, gauge, histogram, type Registry } from '@banstream/platform';
import type { BreakerState } from './breaker.js';

export type HardLimitMetrics = ReturnType<typeof hardLimitMetrics>;

export const BREAKER_STATE_VALUE: Record<BreakerState, number> = { closed: 0, 'half-open': 1, open: 2 };

/** The hard limiter's Prometheus metrics (get-or-create: a registry may hold them already). */
export function hardLimitMetrics(registry: Registry) {
  return {
    latency: histogram(registry, {
      name: 'banstream_enforcer_redis_check_seconds',
      help: 'Round trip of one hard-limit script call (a batch of checks) to Redis, answered calls only',
      labelNames: [],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1],
    }),
    batchSize: histogram(registry, {
      name: 'banstream_enforcer_redis_checks_per_call',
      help: 'Hard-limit checks coalesced into one script call',
      labelNames: [],
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    }),
    errors: counter(registry, {
      name: 'banstream_enforcer_redis_errors_total',
      help: 'Hard-limit script calls that failed (timeout, error) and single checks a script reported as failed (script)',
      labelNames: ['reason'],
    }),
    failMode: counter(registry, {
      name: 'banstream_enforcer_fail_mode_decisions_total',
      help: 'Hard-limit checks decided by the policy failure mode because Redis did not answer, by policy, mode and result',
      labelNames: ['policy', 'mode', 'result'],
    }),
    breakerState: gauge(registry, { name: 'banstream_enforcer_redis_breaker_state', help: 'Redis circuit breaker: 0 closed, 1 half-open, 2 open', labelNames: [] }),
    breakerOpened: counter(registry, { name: 'banstream_enforcer_redis_breaker_opened_total', help: 'Times the Redis circuit breaker opened', labelNames: [] }),
    localEntries: gauge(registry, { name: 'banstream_enforcer_local_limit_entries', help: '(policy, subject) windows held by the local failure mode', labelNames: [] }),
  };
}
