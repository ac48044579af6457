export { banId } from './ban-id.js';
export { escalate, decayedLevel, type OffenderHistory, type EscalatedBan } from './escalation.js';
export { evaluateBan, evaluateAlert, historyAfter, type BanInput } from './ban.js';
export { throttleDenyRatio, throttleRetryAfterSeconds } from './throttle.js';
export { resolveVerdict } from './verdict.js';
export type { AlertDecision, BanDecision, Candidate, DecisionSource, Verdict } from './types.js';
