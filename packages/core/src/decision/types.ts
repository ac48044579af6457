import type { ExceedStatus } from '../policy/compiled.js';

/** A ban decided by the aggregator (or added by hand); the shape of a Ban record. */
export interface BanDecision {
  banId: string;
  subject: string;
  policyId: string;
  reason: string;
  /** The windowed count that crossed the ban threshold, and that window. */
  evidenceCount: number;
  windowMs: number;
  startedAt: number;
  expiresAt: number;
  /** Preview (dry-run) bans are published and shown, never enforced. */
  preview: boolean;
  escalationLevel: number;
  status: ExceedStatus;
}

/**
 * Which mechanism decided a request, as reported by the enforcer. `warming`: its caches
 * had not caught up yet, and a policy's failure mode or ENFORCER_WARMUP_MODE decided.
 */
export type DecisionSource = 'allowlist' | 'ban' | 'throttle' | 'hard-limit' | 'fail-mode' | 'warming' | 'none';

/** One policy's opinion on one request, before precedence is applied. */
export interface Candidate {
  source: Exclude<DecisionSource, 'allowlist' | 'none'>;
  policyId: string;
  deny: boolean;
  status: ExceedStatus;
  preview: boolean;
  reason: string;
  retryAfterSeconds?: number;
  limit?: number;
  remaining?: number;
}

export interface Verdict {
  allowed: boolean;
  status: 200 | ExceedStatus;
  source: DecisionSource;
  policyId?: string;
  reason: string;
  retryAfterSeconds?: number;
  limit?: number;
  remaining?: number;
  /** Preview candidates that would have denied: logged and counted, not enforced. */
  previewDenies: readonly Candidate[];
}
