import { evaluateBan, type Allowlist, type BanDecision, type CompiledPolicy } from '@banstream/core';
import type { Ban, BanEvidence } from '@banstream/schemas';
import { subjectAllowlisted } from './allowlisted.js';
import type { BanLedger } from './ban-ledger.js';
import { EvidenceSample, type EventAtHand } from './evidence.js';
import { toWindowCount, type HotEntry } from './hot-subjects.js';
import type { Outbox } from './outbox.js';
import type { PartitionState } from './partition-state.js';

export interface DeciderContext {
  ledger: BanLedger;
  allowlist: Allowlist;
  /** Processing time: bans already over by now are not published. */
  nowMs(): number;
}

export type Observation = 'counted' | 'late';

/**
 * Which policy counts a subject and the start of its counting key (`policyId|`, and a
 * one-dimension key's scope): prepared once per policy (routing.ts's Route is one).
 */
export interface CountingRoute {
  readonly policy: CompiledPolicy;
  /** Starts with countingPrefix(policy). */
  readonly keyPrefix: string;
}

/**
 * One sighting of a subject: the rest of its counting key after the route's prefix,
 * `count` events at `timeMs`, judged late against `watermark` (the caller advances it).
 * Callers fill one and reuse it: nothing is allocated per event.
 */
export interface Sighting {
  rest: string;
  timeMs: number;
  count: number;
  watermark: number;
  /**
   * The event itself, when the caller has it (stage one): sampled for the evidence of a
   * ban policy's hot subjects. Undefined for summed counts (stage two, backtests).
   */
  event?: EventAtHand | undefined;
  /**
   * The sighting's record is past the partition's committed offset (not a rebuild's
   * replay of records already published for): a crossing of a held ban seen here again
   * sends its history record again (the send may have failed on the history's partition
   * only, before the crash).
   */
  live?: boolean | undefined;
}

const sighting: Sighting = { rest: '', timeMs: 0, count: 0, watermark: 0, event: undefined, live: undefined };
/** The first and last event times of a ban's window: read at the crossing only. */
const span = new Float64Array(2);

/**
 * Counts `count` events of `subject` at `timeMs` under `policy` in `state`, judging
 * lateness against `watermark` (the caller advances it), then
 * decides: the subject's count may become hot (published by `publishCounts`), and
 * a ban policy may ban it, at once, in `out`. `live`: as Sighting's.
 */
export function observe(ctx: DeciderContext, state: PartitionState, policy: CompiledPolicy, subject: string, timeMs: number, count: number, watermark: number, out: Outbox, live = false): Observation {
  // observeKeyed is synchronous and keeps nothing of the sighting: one object serves every call.
  sighting.live = live;
  sighting.rest = subject;
  sighting.timeMs = timeMs;
  sighting.count = count;
  sighting.watermark = watermark;
  return observeKeyed(ctx, state, countingRoute(policy), sighting, out);
}

const routes = new WeakMap<CompiledPolicy, CountingRoute>();

/** The route of a subject given whole: `policyId|` + subject, made once per policy. */
function countingRoute(policy: CompiledPolicy): CountingRoute {
  let route = routes.get(policy);
  if (route === undefined) routes.set(policy, (route = { policy, keyPrefix: `${policy.id}|` }));
  return route;
}

/** `policyId|`, the start of every counting key of `policy`, made once per policy. */
export function countingPrefix(policy: CompiledPolicy): string {
  return countingRoute(policy).keyPrefix;
}

/**
 * observe() for the subject whose counting key (`policyId|subject`) is `route.keyPrefix
 * + seen.rest`: a one-dimension key's scope can go in the prefix (`p|ip:` + the
 * address), so that per event neither the subject nor the key is made unless the
 * subject is hot or banned.
 */
export function observeKeyed(ctx: DeciderContext, state: PartitionState, route: CountingRoute, seen: Sighting, out: Outbox): Observation {
  const { policy, keyPrefix } = route;
  const { rest, timeMs, count, watermark } = seen;
  const interval = policy.threshold.intervalMs;
  const counted = state.counter.addJoined(keyPrefix, rest, interval, timeMs, count, watermark, policy.threshold.count);
  if (counted.late) return 'late';
  const at = Math.max(timeMs, watermark);
  let key: string | undefined;
  const banning = policy.action.type === 'ban';
  if (state.hot.isHot(counted.count, policy.threshold.count)) {
    key = keyPrefix + rest;
    const entry = state.hot.update(key, policy.id, subjectOfKey(key, policy), interval, policy.threshold.count, counted.count, at);
    // Only hot subjects of ban policies are sampled: the evidence costs cold traffic nothing.
    if (banning && entry !== undefined && seen.event !== undefined) (entry.sample ??= new EvidenceSample()).add(seen.event);
  }
  if (policy.action.type !== 'ban') return 'counted';
  const banInterval = policy.action.banThreshold.intervalMs;
  const banLimit = policy.action.banThreshold.count;
  const banCount = banInterval === interval && banLimit === policy.threshold.count ? counted.count : state.counter.addJoined(keyPrefix, rest, banInterval, timeMs, count, watermark, banLimit).count;
  if (banCount <= policy.action.banThreshold.count) return 'counted';
  const subject = subjectOfKey(key ?? keyPrefix + rest, policy);
  const held = ctx.ledger.get(subject);
  // While this policy's ban of the subject runs, evaluateBan decides nothing (no second
  // ban while one lasts): every further event of a banned flood stops here, without its
  // history lookup (a key made and hashed per event) and the decision's input.
  if (held !== undefined && held.policyId === policy.id && held.expiresAt > at) {
    // The crossing that made the held ban (same start), seen again past the committed
    // offset: a replay after a crash, which may have lost the ban's history record.
    if (seen.live === true && held.startedAt === at && held.origin === AGGREGATOR && ctx.ledger.claimHistory(held)) pushHistory(out, subject, held);
    return 'counted';
  }
  const decision = evaluateBan({
    policy,
    subject,
    count: banCount,
    atMs: at,
    ...(held && held.policyId === policy.id ? { activeBanExpiresAt: held.expiresAt } : {}),
    ...withHistory(ctx.ledger.historyOf(policy.id, subject)),
  });
  if (!decision || decision.expiresAt <= ctx.nowMs() || subjectAllowlisted(ctx.allowlist, subject, at)) return 'counted';
  const ban = toBanRecord(decision);
  if (!ctx.ledger.admit(ban)) return 'counted';
  ban.evidence = evidenceOf(state, route, rest, banInterval, banLimit, at, key ?? keyPrefix + rest);
  out.bans.push({ key: subject, value: ban });
  pushHistory(out, subject, ban);
  return 'counted';
}

function pushHistory(out: Outbox, subject: string, ban: Ban): void {
  out.history.push({ key: subject, value: { subject, action: 'ban', at: ban.startedAt, actor: null, ban } });
}

const AGGREGATOR = 'aggregator';

/** The crossing's evidence: the ban window's first and last events, and the hot subject's sample if it has one. */
function evidenceOf(state: PartitionState, route: CountingRoute, rest: string, windowMs: number, limit: number, at: number, key: string): BanEvidence {
  const found = state.counter.eventSpan(route.keyPrefix, rest, windowMs, at, limit, span);
  return EvidenceSample.evidence(state.hot.get(key)?.sample, found ? span[0]! : at, found ? span[1]! : at);
}

function subjectOfKey(key: string, policy: CompiledPolicy): string {
  return key.slice(policy.id.length + 1);
}

function withHistory<T>(history: T | undefined): { history?: T } {
  return history === undefined ? {} : { history };
}

/**
 * Publishes what is due from a partition's hot subjects: changed counts, and for
 * subjects that cooled down by `atMs` (event time), a final record and a tombstone.
 * Not called while the partition is still being rebuilt.
 */
export function publishCounts(state: PartitionState, kind: string, nowMs: number, atMs: number, out: Outbox): void {
  const estimate = (e: HotEntry) => state.counter.estimate(e.key, e.windowMs, atMs, e.threshold);
  for (const e of state.hot.cool(atMs, estimate)) {
    out.counts.push({ key: e.key, value: toWindowCount(e, kind, true) }, { key: e.key, value: null });
  }
  for (const e of state.hot.due(nowMs)) out.counts.push({ key: e.key, value: toWindowCount(e, kind, false) });
}

export function toBanRecord(d: BanDecision): Ban {
  return {
    banId: d.banId,
    subject: d.subject,
    policyId: d.policyId,
    reason: d.reason,
    evidenceCount: d.evidenceCount,
    windowSeconds: Math.max(1, Math.round(d.windowMs / 1000)),
    startedAt: d.startedAt,
    expiresAt: d.expiresAt,
    preview: d.preview,
    escalationLevel: d.escalationLevel,
    origin: 'aggregator',
    httpStatus: d.status,
    createdBy: null,
    evidence: null,
  };
}
