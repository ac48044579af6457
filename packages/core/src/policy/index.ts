export * from './schema.js';
export type * from './compiled.js';
export { parseDuration, tryParseDuration, formatDuration } from './duration.js';
export { validatePolicyDocument, formatPolicyError, policyDocumentIssues, type PolicyError, type PolicyValidation } from './validate.js';
export { parsePolicyText, MAX_POLICY_TEXT_BYTES, type PolicyTextFormat } from './load.js';
export { compileSchedule, hourOfWeek, type CompiledSchedule } from './schedule.js';
export { compileMatch, globToRegExp, type MatchableRequest, type RequestPredicate } from './match.js';
export { applicablePolicies } from './resolve.js';
export { compilePolicy } from './compile.js';
