import type { Candidate, ExceedStatus } from '@banstream/core';
import type { LimitShape } from './limit-spec.js';
import type { HardLimitPolicy, LimitReply } from './types.js';

const UNAVAILABLE = 'limit store unavailable';

function statusOf(policy: HardLimitPolicy): ExceedStatus {
  return policy.action.type === 'alert' ? 429 : policy.action.status;
}

/** Alert-only policies count and report, they never deny. */
function denies(policy: HardLimitPolicy, reply: LimitReply): boolean {
  return !reply.allowed && policy.action.type !== 'alert';
}

interface Reasons {
  within: string;
  reached: string;
}

// Built once per limit and source: the hot path hands out the same strings.
const reasonCache = { 'hard-limit': new WeakMap<LimitShape, Reasons>(), 'fail-mode': new WeakMap<LimitShape, Reasons>() };

function reasonsFor(policy: HardLimitPolicy, spec: LimitShape, source: 'hard-limit' | 'fail-mode'): Reasons {
  let reasons = reasonCache[source].get(spec);
  if (reasons === undefined) {
    const where = source === 'fail-mode' ? `${UNAVAILABLE}; local limit` : 'hard limit';
    reasons = { within: `within the ${where} of ${spec.description}`, reached: `${where} of ${spec.description} reached (policy ${policy.id})` };
    reasonCache[source].set(spec, reasons);
  }
  return reasons;
}

/** A decision by the limit itself: Redis's (`hard-limit`), or the in-process one of the `local` failure mode (`fail-mode`). */
export function limitCandidate(policy: HardLimitPolicy, spec: LimitShape, reply: LimitReply, source: 'hard-limit' | 'fail-mode'): Candidate {
  const deny = denies(policy, reply);
  const reasons = reasonsFor(policy, spec, source);
  const candidate: Candidate = {
    source,
    policyId: policy.id,
    deny,
    status: statusOf(policy),
    preview: policy.mode === 'preview',
    reason: reply.allowed ? reasons.within : reasons.reached,
    limit: spec.limit,
    remaining: reply.remaining,
  };
  if (deny) candidate.retryAfterSeconds = Math.max(1, Math.ceil(reply.retryAfterMs / 1000));
  return candidate;
}

/** A decision by the `open` or `closed` failure mode, when Redis did not answer in time. */
export function failureModeCandidate(policy: HardLimitPolicy, spec: LimitShape, mode: 'open' | 'closed', retryAfterSeconds: number): Candidate {
  const deny = mode === 'closed' && policy.action.type !== 'alert';
  const candidate: Candidate = {
    source: 'fail-mode',
    policyId: policy.id,
    deny,
    status: statusOf(policy),
    preview: policy.mode === 'preview',
    reason: `${UNAVAILABLE}; ${mode === 'open' ? 'allowed' : 'denied'} by failure mode ${mode} (policy ${policy.id})`,
    limit: spec.limit,
  };
  if (mode === 'closed') candidate.retryAfterSeconds = retryAfterSeconds;
  return candidate;
}
