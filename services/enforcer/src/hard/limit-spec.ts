import { BanstreamError, formatDuration, type FailureMode, type HardAlgorithm } from '@banstream/core';
import type { HardLimitPolicy } from './types.js';

/** A limit as clients are told of it. */
export interface LimitShape {
  /** Reported in RateLimit headers: requests per interval, or the bucket size. */
  limit: number;
  /** For reasons: "100 per 1h", "a burst of 10 refilled at 5/s". */
  description: string;
}

/** A hard policy as its script takes it, and as the `local` failure mode limits it. */
export interface LimitSpec extends LimitShape {
  algorithm: HardAlgorithm;
  /** Sliding window and log: limit and interval (ms). Token bucket: size and emission interval (ms per token). */
  args: readonly [number, number];
  failureMode: FailureMode;
  /** The in-process sliding window of the `local` failure mode: the threshold's count per interval. */
  local: LimitShape & { intervalMs: number };
}

// Policies are compiled once and long-lived: derive each one's spec once.
const specs = new WeakMap<HardLimitPolicy, LimitSpec>();

export function limitSpecOf(policy: HardLimitPolicy): LimitSpec {
  let spec = specs.get(policy);
  if (spec === undefined) {
    spec = deriveSpec(policy);
    specs.set(policy, spec);
  }
  return spec;
}

function deriveSpec(policy: HardLimitPolicy): LimitSpec {
  const { enforcement, threshold } = policy;
  if (enforcement.type !== 'hard') {
    throw new BanstreamError('POLICY_INVALID', `policy ${policy.id} is not a hard policy; only hard policies are checked in Redis`);
  }
  const { count, intervalMs } = threshold;
  const local = { limit: count, intervalMs, description: `${count} per ${formatDuration(intervalMs)}` };
  const { algorithm, failureMode } = enforcement;
  if (algorithm !== 'token-bucket') return { algorithm, failureMode, limit: count, args: [count, intervalMs], description: local.description, local };
  // Validation requires a burst for token buckets; without one, refill the count over the interval.
  const burst = threshold.burst ?? { size: count, refillPerSecond: (count * 1000) / intervalMs };
  return {
    algorithm,
    failureMode,
    limit: burst.size,
    args: [burst.size, 1000 / burst.refillPerSecond],
    description: `a burst of ${burst.size} refilled at ${burst.refillPerSecond}/s`,
    local,
  };
}
