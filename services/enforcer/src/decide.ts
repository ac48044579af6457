import {
  apiKeySubjectOf,
  ipSubjectOf,
  throttleDenyRatio,
  throttleRetryAfterSeconds,
  userSubjectOf,
  type Allowlist,
  type AllowlistEntry,
  type Candidate,
  type CompiledPolicy,
  type ExceedStatus,
  type PolicyBook,
  type RequestAttributes,
  type Verdict,
} from '@banstream/core';
import type { Ban } from '@banstream/schemas';
import type { BanCache } from './cache/ban-cache.js';
import type { CountCache } from './cache/count-cache.js';

export interface LocalState {
  bans: BanCache;
  counts: CountCache;
  allowlist: Allowlist;
  policies: PolicyBook;
}

/** A hard policy to check in Redis for this request, and what the request costs under it. */
export interface HardCheck {
  policy: CompiledPolicy;
  subject: string;
  cost: number;
}

/** The quota closest to running out, for the RateLimit headers of an allowed request. */
export interface Quota {
  policyId: string;
  limit: number;
  remaining: number;
  windowSeconds: number;
}

/** What the enforcer answers: the verdict, and the quota closest to running out, for RateLimit headers. */
export interface Decision extends Verdict {
  quota?: Quota;
}

export interface LocalDecision {
  allowlisted?: AllowlistEntry;
  /** Shared when empty: read it, never push to it. */
  candidates: readonly Candidate[];
  hard: HardCheck[];
  quota?: Quota;
}

/**
 * Everything the enforcer decides from its local caches, without I/O: the allowlist
 * (which ends the decision), the bans on the request's address, networks, user, API
 * key, on any other subject it carries that a manual ban names, and on each
 * applicable ban policy's subject; from the shared counts, the throttle share of each
 * applicable throttle policy and the exceed action of each ban policy whose subject is
 * over its threshold and not yet banned (Cloud Armor's rate_based_ban). Hard policies
 * are returned for the Redis check. `uniform` draws in [0, 1) for the throttle share.
 */
export function decideLocally(state: LocalState, attrs: RequestAttributes, nowMs: number, uniform: () => number): LocalDecision {
  // The address's ban-table entry is read now and its denial taken last: the cache
  // miss of that read (the table of a million bans is 100 MB) overlaps the work between.
  if (attrs.ipAddress) state.bans.touchAddress(attrs.ipAddress);
  const allowlisted = state.allowlist.find(attrs, nowMs);
  if (allowlisted) return { allowlisted, candidates: NO_CANDIDATES, hard: NO_HARD };
  // The bans on the other subjects, in order; no array while there is none (most checks).
  let bans: Ban[] | undefined;
  // Subject texts from the compiled keys every other reader uses (escaped, bounded, hashed alike).
  if (attrs.userId !== undefined) bans = found(bans, state.bans.subject(userSubjectOf(attrs)!, nowMs));
  if (attrs.apiKeyHash !== undefined) bans = found(bans, state.bans.subject(apiKeySubjectOf(attrs)!, nowMs));
  if (attrs.ipAddress) bans = state.bans.networksOf(attrs.ipAddress, nowMs, bans);
  // Manual bans on other subjects (a path, a header, a composite): none in most deployments.
  const manual = state.bans.manualSubjectFns;
  for (let i = 0; i < manual.length; i++) {
    const subject = manual[i]!(attrs);
    if (subject !== undefined) bans = found(bans, state.bans.subject(subject, nowMs));
  }
  const decision: LocalDecision = { candidates: NO_CANDIDATES, hard: NO_HARD, quota: undefined };
  for (const policy of state.policies.applicableAtCheck(attrs)) {
    const use = localUse(policy, state.counts);
    if (use === undefined) continue;
    const subject = policy.subjectOf(attrs);
    if (subject === undefined) continue;
    const action = policy.action;
    if (use === 'hard') (decision.hard === NO_HARD ? (decision.hard = []) : decision.hard).push({ policy, subject, cost: policy.costOf(attrs) });
    else if (action.type === 'throttle') throttle(state, policy, action.status, subject, nowMs, uniform, decision);
    else if (action.type === 'ban') {
      if (!keyedOnAddressAlone(policy)) bans = found(bans, state.bans.subject(subject, nowMs));
      if (action.exceed !== 'none') throttle(state, policy, action.status, subject, nowMs, action.exceed === 'all' ? ALWAYS : uniform, decision);
    }
  }
  // The address ban comes first among the bans' denials, as the most common.
  const onAddress = attrs.ipAddress ? state.bans.addressDenial(attrs.ipAddress, nowMs, banReason) : state.bans.denial(state.bans.subject(ipSubjectOf(attrs)!, nowMs), nowMs, banReason);
  if (onAddress) addCandidate(decision, onAddress);
  if (bans) for (const ban of bans) addCandidate(decision, state.bans.denial(ban, nowMs, banReason)!);
  return decision;
}

/** Shared by every decision without hard policies; replaced, never pushed to. */
const NO_HARD: HardCheck[] = [];
Object.freeze(NO_HARD);
/**
 * Shared by every decision without candidates (most checks), so read-only by its type;
 * not frozen, as V8 iterates a frozen array with for-of through allocated iterator objects.
 */
const NO_CANDIDATES: readonly Candidate[] = [];

/**
 * A one-element literal for the first candidate: pushing to an empty array would
 * reserve room for 17, a 150-byte allocation in nearly half the checks of an attack.
 */
function addCandidate(decision: LocalDecision, candidate: Candidate): void {
  if (decision.candidates === NO_CANDIDATES) decision.candidates = [candidate];
  else (decision.candidates as Candidate[]).push(candidate);
}

/** `bans` with `ban` appended unless absent or already there (two policies may share a subject). */
function found(bans: Ban[] | undefined, ban: Ban | undefined): Ban[] | undefined {
  if (ban === undefined) return bans;
  if (bans === undefined) return [ban];
  if (!bans.includes(ban)) bans.push(ban);
  return bans;
}

/** `uniform` for an exceed action of `all`: every request over the threshold is denied. */
const ALWAYS = () => 0;

/**
 * What a policy asks of this check, if anything: no subject is built for the others.
 * A ban policy keyed on the address alone bans `ip:…`, already looked up, so it needs
 * its subject only for its exceed action while some subject of it has a shared count;
 * alerts and logs are the aggregator's.
 */
function localUse(policy: CompiledPolicy, counts: CountCache): 'hard' | 'ban' | 'throttle' | undefined {
  if (policy.enforcement.type === 'hard') return 'hard';
  const action = policy.action;
  if (action.type === 'ban') return keyedOnAddressAlone(policy) && (action.exceed === 'none' || !counts.holds(policy.id)) ? undefined : 'ban';
  return action.type === 'throttle' ? 'throttle' : undefined;
}

function keyedOnAddressAlone(policy: CompiledPolicy): boolean {
  const key = policy.spec.key;
  return key.length === 1 && key[0] === 'ip';
}

// A ban's reason text is the same for every request it denies (and toISOString
// alone takes about 400 ns): the cache keeps it once built (BanCache.addressDenial, denial).
function banReason(ban: Ban): string {
  return `${ban.subject} is banned until ${new Date(ban.expiresAt).toISOString()}: ${ban.reason}`;
}

function throttle(state: LocalState, policy: CompiledPolicy, status: ExceedStatus, subject: string, nowMs: number, uniform: () => number, decision: LocalDecision): void {
  const limit = policy.threshold.count;
  const windowSeconds = Math.round(policy.threshold.intervalMs / 1000);
  const shared = state.counts.get(policy.id, subject, nowMs);
  const count = shared?.count ?? 0;
  const remaining = Math.max(0, Math.floor(limit - count));
  if (!decision.quota || remaining < decision.quota.remaining) decision.quota = { policyId: policy.id, limit, remaining, windowSeconds };
  const ratio = throttleDenyRatio(count, limit);
  // ALWAYS draws 0: below any positive share, so every request over the limit is denied.
  if (ratio === 0 || uniform() >= ratio) return;
  addCandidate(decision, {
    source: 'throttle',
    policyId: policy.id,
    deny: true,
    status,
    preview: policy.mode === 'preview',
    reason: `${subject} sends ${Math.round(count)} requests per ${windowSeconds}s, over the limit of ${limit}: ${uniform === ALWAYS ? 'all' : `${Math.round(ratio * 100)}%`} are refused${policy.action.type === 'ban' ? ' until the count falls back (or the ban threshold bans it)' : ''}`,
    retryAfterSeconds: throttleRetryAfterSeconds(count, limit, policy.threshold.intervalMs),
    limit,
    remaining,
  });
}
