export { banId } from './ban-id.js';
export { escalate, decayedLevel, type OffenderHistory, type EscalatedBan } from './escalation.js';
export { evaluateBan, historyAfter, type BanInput } from './ban.js';
export { throttleDenyRatio, throttleRetryAfterSeconds } from './throttle.js';
export { resolveVerdict } from './verdict.js';
export type { BanDecision, Candidate, DecisionSource, Verdict } from './types.js';
