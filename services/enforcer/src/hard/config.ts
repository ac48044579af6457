import { Type } from '@sinclair/typebox';
import type { ConfigOf } from '@banstream/platform';
import type { HardLimiterOptions } from './hard-limiter.js';

const int = (min: number, max: number, fallback: number, what: string, description: string) =>
  Type.Integer({ minimum: min, maximum: max, default: fallback, expected: `an integer from ${min} to ${max} (${what})`, description });

/** The hard limiter's variables, for the enforcer to spread into its env declaration. */
export const hardLimitEnv = {
  ENFORCER_REDIS_TIMEOUT_MS: int(
    1,
    10_000,
    5,
    'ms a hard-limit check waits for Redis before the failure mode decides',
    "how long a hard-limit check waits for Redis before the policy's failure mode decides",
  ),
  ENFORCER_REDIS_KEY_PREFIX: Type.String({
    pattern: '^[A-Za-z0-9._:-]*$',
    maxLength: 64,
    default: 'bs:',
    expected: 'letters, digits, dot, dash, underscore or colon, e.g. bs:',
    description: 'prefix of the hard-limit keys',
  }),
  ENFORCER_REDIS_MAX_BATCH: int(1, 1_000, 128, 'most checks coalesced into one script call', 'most checks coalesced into one script call'),
  ENFORCER_BREAKER_FAILURES: int(1, 1_000, 5, 'consecutive failed Redis calls that open the circuit breaker', 'consecutive failures that open the circuit breaker'),
  ENFORCER_BREAKER_COOLDOWN_MS: int(10, 600_000, 1_000, 'ms the breaker stays open before one probe call', 'how long the circuit breaker stays open before one probe call'),
  ENFORCER_LOCAL_LIMIT_MAX_ENTRIES: int(
    1,
    10_000_000,
    100_000,
    '(policy, subject) windows the local failure mode keeps',
    'windows the `local` failure mode keeps in memory (Redis unavailable, and warm-up)',
  ),
};
export type HardLimitConfig = ConfigOf<typeof hardLimitEnv>;

/** The createHardLimiter options that come from configuration. */
export function hardLimiterSettings(config: HardLimitConfig): Pick<HardLimiterOptions, 'timeoutMs' | 'keyPrefix' | 'maxBatch' | 'breaker' | 'localMaxEntries'> {
  return {
    timeoutMs: config.ENFORCER_REDIS_TIMEOUT_MS,
    keyPrefix: config.ENFORCER_REDIS_KEY_PREFIX,
    maxBatch: config.ENFORCER_REDIS_MAX_BATCH,
    breaker: { failureThreshold: config.ENFORCER_BREAKER_FAILURES, coolDownMs: config.ENFORCER_BREAKER_COOLDOWN_MS },
    localMaxEntries: config.ENFORCER_LOCAL_LIMIT_MAX_ENTRIES,
  };
}
