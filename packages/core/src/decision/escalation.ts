import type { CompiledEscalation } from '../policy/compiled.js';

/**
 * Repeat offenders get longer bans (fail2ban's bantime.increment), and forgiveness
 * comes back with quiet time (the decay CrowdSec users ask for): one level is
 * forgiven per `decayAfterMs` without a ban since the last one ended.
 */
export interface OffenderHistory {
  /** 0 for a first offence. */
  level: number;
  /** When the last ban ended (its expiry), ms. */
  lastBanEndsAt: number;
}

export interface EscalatedBan {
  level: number;
  durationMs: number;
}

export function decayedLevel(history: OffenderHistory | undefined, escalation: CompiledEscalation, nowMs: number): number {
  if (!history) return -1;
  const quiet = nowMs - history.lastBanEndsAt;
  if (quiet <= 0) return history.level;
  return history.level - Math.floor(quiet / escalation.decayAfterMs);
}

/** The level and duration of the next ban for this offender. */
export function escalate(baseMs: number, escalation: CompiledEscalation | undefined, history: OffenderHistory | undefined, nowMs: number): EscalatedBan {
  if (!escalation) return { level: 0, durationMs: baseMs };
  const level = Math.max(0, decayedLevel(history, escalation, nowMs) + 1);
  const durationMs = Math.min(escalation.maxDurationMs, Math.round(baseMs * escalation.multiplier ** level));
  return { level, durationMs: Math.max(baseMs, durationMs) };
}
