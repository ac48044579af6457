import type { HardAlgorithm } from '@banstream/core';

/**
 * Short name of each algorithm: in keys, so a policy that changes algorithm never
 * meets a key of the wrong type, and in script arguments (lua/hardLimit-n.lua).
 */
export const ALGORITHM_TAG: Record<HardAlgorithm, string> = { 'sliding-window': 'sw', 'sliding-log': 'sl', 'token-bucket': 'tb' };

/**
 * `<prefix>hl:<policy>:<algorithm>:{<subject>}`. The subject is the hash tag, so in
 * a Redis Cluster all hard limits of one subject live in one slot and one request's
 * checks of that subject go out as one script call. Policy ids cannot contain `:`,
 * `{` or `}`, so the key names one (policy, algorithm, subject) unambiguously.
 */
export function hardLimitKey(prefix: string, policyId: string, algorithm: HardAlgorithm, subject: string): string {
  return `${prefix}hl:${policyId}:${ALGORITHM_TAG[algorithm]}:{${subject}}`;
}
