import type { Candidate, CompiledPolicy, PolicyBook, RequestAttributes } from '@banstream/core';
import type { Decision } from './decide.js';
import type { LocalDecision } from './decide.js';
import { LocalLimiter } from './hard/local-limiter.js';

/** What decides a request no cached policy applies to while the caches load (ENFORCER_WARMUP_MODE). */
export type WarmUpMode = 'open' | 'closed';

/** The policy id a denial by ENFORCER_WARMUP_MODE carries. */
export const WARM_UP_POLICY_ID = 'warm-up';

/** How soon a client refused while the caches load may try again: loading takes seconds. */
const WARMING_RETRY_AFTER_SECONDS = 1;

/**
 * Decisions of an enforcer whose caches have not caught up with their topics (just
 * started, or restarted with a million bans to read). It does not know yet who is
 * banned or how much each subject has sent, so "allowed, source none" would be a
 * guess. Instead, on top of what the loaded part of the caches says (a ban already
 * read denies as usual; hard policies ask Redis as usual):
 * - each applicable async ban or throttle policy decides by its `failureMode`:
 *   `closed` denies with the policy's status, `open` allows, `local` applies the
 *   policy's threshold in process (this instance alone);
 * - a request no enforced policy of that kind applies to is decided by the
 *   sidecar-wide mode: `closed` (the default) refuses it with 429 and Retry-After,
 *   `open` lets it through;
 * and the decision's source is `warming`, so logs, metrics and headers show it.
 */
export class WarmUp {
  private readonly local: LocalLimiter;
  private readonly modeDenial: Candidate | undefined;
  private readonly reasons = new WeakMap<CompiledPolicy, string>();

  constructor(mode: WarmUpMode, localMaxEntries: number) {
    this.local = new LocalLimiter(localMaxEntries);
    this.modeDenial =
      mode === 'open'
        ? undefined
        : {
            source: 'warming',
            policyId: WARM_UP_POLICY_ID,
            deny: true,
            status: 429,
            preview: false,
            retryAfterSeconds: WARMING_RETRY_AFTER_SECONDS,
            reason: 'the enforcer is still loading its caches: refused by ENFORCER_WARMUP_MODE closed',
          };
  }

  /**
   * Appends to `decision` the failure-mode candidates of the policies that apply to the
   * request at check time (applicableAtCheck, as decideLocally asks): a check has no
   * status, so a failed-logins policy (`statuses: [401]`) governs every /login check.
   */
  decide(decision: LocalDecision, book: PolicyBook, attrs: RequestAttributes, nowMs: number): void {
    const found: Candidate[] = [];
    let governed = false;
    for (const policy of book.applicableAtCheck(attrs)) {
      const e = policy.enforcement;
      if (e.type !== 'async' || policy.action.type === 'alert') continue;
      if (policy.mode === 'enforce') governed = true;
      const candidate = this.byFailureMode(policy, policy.action.status, e.failureMode, attrs, nowMs);
      if (candidate) found.push(candidate);
    }
    if (!governed && this.modeDenial) found.push(this.modeDenial);
    if (found.length > 0) decision.candidates = decision.candidates.concat(found);
  }

  /** An allowed decision made while warming says so, and why. */
  mark(decision: Decision): Decision {
    if (decision.allowed && decision.source === 'none') {
      decision.source = 'warming';
      decision.reason = 'the enforcer is still loading its caches: allowed by the failure modes that apply';
    }
    return decision;
  }

  private byFailureMode(policy: CompiledPolicy, status: 403 | 429, mode: 'open' | 'closed' | 'local', attrs: RequestAttributes, nowMs: number): Candidate | undefined {
    if (mode === 'open') return undefined;
    const preview = policy.mode === 'preview';
    if (mode === 'closed') {
      return { source: 'warming', policyId: policy.id, deny: true, status, preview, reason: this.closedReason(policy), retryAfterSeconds: WARMING_RETRY_AFTER_SECONDS };
    }
    const subject = policy.subjectOf(attrs);
    if (subject === undefined) return undefined;
    const { count, intervalMs } = policy.threshold;
    const reply = this.local.hit(`${policy.id}|${subject}`, count, intervalMs, nowMs, policy.costOf(attrs));
    if (reply.allowed) return undefined;
    return {
      source: 'warming',
      policyId: policy.id,
      deny: true,
      status,
      preview,
      limit: count,
      remaining: 0,
      reason: `the enforcer is still loading its caches: local limit of ${count} per ${intervalMs / 1000}s reached (policy ${policy.id})`,
      retryAfterSeconds: Math.max(1, Math.ceil(reply.retryAfterMs / 1000)),
    };
  }

  private closedReason(policy: CompiledPolicy): string {
    let reason = this.reasons.get(policy);
    if (reason === undefined) this.reasons.set(policy, (reason = `the enforcer is still loading its caches: refused by failure mode closed (policy ${policy.id})`));
    return reason;
  }
}
