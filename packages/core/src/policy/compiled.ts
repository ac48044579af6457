/**
 * A policy as the engines use it: defaults applied, durations in milliseconds,
 * key dimensions parsed, match predicates and schedule compiled once at load.
 */
import type { RequestAttributes } from '../subjects/index.js';
import type { PolicySpec } from './schema.js';

export type PolicyMode = 'enforce' | 'preview';
export type ExceedStatus = 429 | 403;
/** What a ban policy denies while its subject is over `threshold` and not (yet) banned. */
export type ExceedAction = 'excess' | 'all' | 'none';
export type FailureMode = 'open' | 'closed' | 'local';
export type HardAlgorithm = 'sliding-window' | 'sliding-log' | 'token-bucket';

export interface CompiledThreshold {
  count: number;
  intervalMs: number;
  burst?: { size: number; refillPerSecond: number };
}

export type CompiledAction =
  | { type: 'throttle'; status: ExceedStatus }
  | { type: 'ban'; status: ExceedStatus; exceed: ExceedAction; banThreshold: { count: number; intervalMs: number }; banDurationMs: number }
  | { type: 'alert' };

export type CompiledEnforcement = { type: 'async'; failureMode: FailureMode } | { type: 'hard'; failureMode: FailureMode; algorithm: HardAlgorithm };

export interface CompiledEscalation {
  multiplier: number;
  maxDurationMs: number;
  decayAfterMs: number;
}

/** Attrs is generic for unit tests of the resolution rules; the engines match RequestAttributes. */
export interface CompiledPolicy<Attrs = RequestAttributes> {
  id: string;
  mode: PolicyMode;
  enabled: boolean;
  /** Policies sharing a group compete; the id when none is given. */
  group: string;
  priority: number;
  threshold: CompiledThreshold;
  action: CompiledAction;
  enforcement: CompiledEnforcement;
  escalation?: CompiledEscalation;
  /** Does this request count towards the policy (match block and schedule)? The aggregator's question. */
  matches(attrs: Attrs): boolean;
  /**
   * Does the policy apply to this request as it is checked, before any response: the
   * match block without its status conditions, and the schedule. The enforcer's
   * question: a ban earned by failed logins denies the subject's next login whatever
   * its outcome would be.
   */
  matchesAtCheck(attrs: Attrs): boolean;
  /** The match block has status conditions: only some responses count (matches and matchesAtCheck differ). */
  byStatus: boolean;
  /**
   * What the request counts for in this policy's windows (aggregator) and hard limit
   * (enforcer): the first of the policy's `costs` that matches, else the request's own.
   */
  costOf(attrs: Attrs): number;
  /** The subject this policy counts the request under, or undefined if a key dimension is missing. */
  subjectOf(attrs: Attrs): string | undefined;
  /** Only these subjects, when the policy is an override for specific subjects. */
  subjects?: ReadonlySet<string>;
  /** The validated source, for display and for the policies topic. */
  spec: PolicySpec;
}
