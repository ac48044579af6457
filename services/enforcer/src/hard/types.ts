import type { Candidate, CompiledPolicy } from '@banstream/core';

/** What the hard limiter reads of a compiled policy (a CompiledPolicy fits). */
export type HardLimitPolicy = Pick<CompiledPolicy, 'id' | 'mode' | 'threshold' | 'action' | 'enforcement'>;

/** One hard policy applied to one request: the policy and the subject it counts under. */
export interface HardLimitItem {
  policy: HardLimitPolicy;
  subject: string;
}

/** One limit decision, from a Redis script or the local fallback. */
export interface LimitReply {
  allowed: boolean;
  remaining: number;
  /** When denied: milliseconds until a request would be admitted again. */
  retryAfterMs: number;
}

export interface HardLimiter {
  /** One Candidate per item, in order; never rejects: when Redis cannot answer, each policy's failure mode does. */
  check(items: readonly HardLimitItem[], nowMs: number): Promise<Candidate[]>;
  /** Sends what is queued and stops the breaker's gauge; later checks are decided by the failure modes. */
  close(): void;
}
