import type { Candidate, CompiledPolicy } from '@banstream/core';

/** What the hard limiter reads of a compiled policy (a CompiledPolicy fits). */
export type HardLimitPolicy = Pick<CompiledPolicy, 'id' | 'mode' | 'threshold' | 'action' | 'enforcement'>;

/** One hard policy applied to one request: the policy, the subject it counts under, and what the request costs. */
export interface HardLimitItem {
  policy: HardLimitPolicy;
  subject: string;
  /** 1 to MAX_COST (default 1); anything else rejects the check with COST_OUT_OF_RANGE before anything is counted. */
  cost?: number;
}

/** One limit decision, from a Redis script or the local fallback. */
export interface LimitReply {
  allowed: boolean;
  remaining: number;
  /** When denied: milliseconds until a request would be admitted again. */
  retryAfterMs: number;
}

export interface HardLimiter {
  /**
   * One Candidate per item, in order. When Redis cannot answer, each policy's
   * failure mode decides; it rejects only for a policy that is not hard. Redis
   * decides on its own clock (one clock per key, whatever the skew between
   * enforcers); `nowMs` is the time of the `local` failure mode's window.
   */
  check(items: readonly HardLimitItem[], nowMs: number): Promise<Candidate[]>;
  /**
   * Runs the script once with no keys, so the first real checks do not pay for
   * loading it and warming code paths within their few milliseconds. Call it
   * before reporting ready; it rejects when Redis does not answer (checks still
   * work then, by failure mode, and recover on their own).
   */
  warmUp(): Promise<void>;
  /** Sends what is queued; later checks are decided by the failure modes. */
  close(): void;
}
