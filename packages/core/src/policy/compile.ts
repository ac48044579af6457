import { compileKey, normaliseSubject, parseKey, type RequestAttributes } from '../subjects/index.js';
import type { CompiledAction, CompiledEnforcement, CompiledPolicy } from './compiled.js';
import { parseDuration } from './duration.js';
import { compileCosts } from './costs.js';
import { compileMatch } from './match.js';
import { compileSchedule } from './schedule.js';
import type { ActionSpec, PolicySpec } from './schema.js';

/**
 * Turns a validated policy into the form the engines use. Call it on the output of
 * validatePolicyDocument / parsePolicyText: it assumes the cross-field rules hold.
 */
export function compilePolicy(spec: PolicySpec): CompiledPolicy<RequestAttributes> {
  const matchRequest = compileMatch(spec.match);
  // Status conditions choose what counts, not what is checked: one predicate without them for the enforcer.
  const byStatus = spec.match?.statuses !== undefined || spec.match?.statusClasses !== undefined;
  const matchAtCheck = byStatus ? compileMatch(spec.match, { atCheck: true }) : matchRequest;
  const schedule = spec.schedule ? compileSchedule(spec.schedule) : undefined;
  const subjectOf = compileKey(parseKey(spec.key));
  const intervalMs = parseDuration(spec.threshold.interval);
  const compiled: CompiledPolicy<RequestAttributes> = {
    id: spec.id,
    mode: spec.mode ?? 'preview',
    enabled: spec.enabled ?? true,
    group: spec.group ?? spec.id,
    priority: spec.priority ?? 0,
    threshold: {
      count: spec.threshold.count,
      intervalMs,
      ...(spec.threshold.burst ? { burst: { ...spec.threshold.burst } } : {}),
    },
    action: compileAction(spec.action, spec.threshold.count, intervalMs),
    enforcement: compileEnforcement(spec),
    // The schedule is judged at the request's own time (event time in the aggregator).
    matches: schedule ? (r) => schedule.isActive(r.timestamp) && matchRequest(r) : matchRequest,
    matchesAtCheck: schedule ? (r) => schedule.isActive(r.timestamp) && matchAtCheck(r) : matchAtCheck,
    byStatus,
    costOf: compileCosts(spec.costs),
    subjectOf,
    spec,
  };
  if (spec.escalation) {
    compiled.escalation = {
      multiplier: spec.escalation.multiplier,
      maxDurationMs: parseDuration(spec.escalation.maxDuration),
      decayAfterMs: parseDuration(spec.escalation.decayAfter),
    };
  }
  if (spec.match?.subjects) compiled.subjects = new Set(spec.match.subjects.map(normaliseSubject));
  return compiled;
}

function compileAction(action: ActionSpec, thresholdCount: number, thresholdMs: number): CompiledAction {
  if (action.type === 'throttle') return { type: 'throttle', status: action.status ?? 429 };
  if (action.type === 'alert') return { type: 'alert' };
  return {
    type: 'ban',
    status: action.status ?? 403,
    // Cloud Armor's rate_based_ban denies the traffic over the rate threshold before any ban.
    exceed: action.exceed ?? 'excess',
    // Without a separate ban threshold, crossing the rate threshold bans.
    banThreshold: action.banThreshold ? { count: action.banThreshold.count, intervalMs: parseDuration(action.banThreshold.interval) } : { count: thresholdCount, intervalMs: thresholdMs },
    banDurationMs: parseDuration(action.banDuration),
  };
}

function compileEnforcement(spec: PolicySpec): CompiledEnforcement {
  const e = spec.enforcement;
  // Closed by default: an enforcer still loading its caches does not know who is banned.
  if (!e || e.type === 'async') return { type: 'async', failureMode: e?.failureMode ?? 'closed' };
  return { type: 'hard', failureMode: e.failureMode ?? 'closed', algorithm: e.algorithm ?? 'sliding-window' };
}
