import type { CompiledPolicy } from '../policy/compiled.js';
import { banId } from './ban-id.js';
import { escalate, type OffenderHistory } from './escalation.js';
import type { BanDecision } from './types.js';

export interface BanInput {
  policy: CompiledPolicy;
  subject: string;
  /** The subject's count over the ban threshold's interval, including this event. */
  count: number;
  /** Event time of the request that brought the count here. */
  atMs: number;
  /** An active ban for this (policy, subject), if one is held: no second ban while it lasts. */
  activeBanExpiresAt?: number;
  history?: OffenderHistory;
}

/**
 * Cloud Armor rate_based_ban: when the count over `banThreshold.interval` exceeds
 * `banThreshold.count`, ban the subject for `banDuration` (escalated for repeat
 * offenders). Returns undefined when no new ban is due.
 */
export function evaluateBan(input: BanInput): BanDecision | undefined {
  const { policy, subject, count, atMs } = input;
  if (policy.action.type !== 'ban') return undefined;
  const { banThreshold, banDurationMs, status } = policy.action;
  if (count <= banThreshold.count) return undefined;
  if (input.activeBanExpiresAt !== undefined && input.activeBanExpiresAt > atMs) return undefined;
  const { level, durationMs } = escalate(banDurationMs, policy.escalation, input.history, atMs);
  return {
    banId: banId(policy.id, subject, atMs),
    subject,
    policyId: policy.id,
    reason: `${formatCount(count)} requests in ${formatWindow(banThreshold.intervalMs)} exceed the ban threshold of ${banThreshold.count}`,
    evidenceCount: count,
    windowMs: banThreshold.intervalMs,
    startedAt: atMs,
    expiresAt: atMs + durationMs,
    preview: policy.mode === 'preview',
    escalationLevel: level,
    status,
  };
}

/** The history to keep after a ban: the level it reached and when it ends. */
export function historyAfter(ban: BanDecision): OffenderHistory {
  return { level: ban.escalationLevel, lastBanEndsAt: ban.expiresAt };
}

function formatCount(count: number): string {
  return Number.isInteger(count) ? String(count) : count.toFixed(1);
}

function formatWindow(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
