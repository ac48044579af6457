/**
 * The control API's contract, for its clients (the CLI) as for the service: roles,
 * tokens, the shapes of plans and backtest reports, and the network-width guard the
 * API applies (which the CLI checks before it asks).
 */
export { allows, isRole, requiredRole, PERMISSIONS, ROLES, ROLES_TEXT, type Permission, type Role } from './roles.js';
export { hashToken, newToken, tokenEntryLine } from './tokens.js';
export type { FieldChange, PlannedChange } from './policy-plan.js';
export type { CountryRate, DenialRate, MetricsSource, NearThreshold, OverviewSnapshot } from './overview.js';
export type { BacktestReport, BanOutcome, OverThreshold, PolicyOutcome } from './backtest-report.js';
export { DEFAULT_MIN_PREFIX, describeWide, MIN_PREFIX_VARIABLE, wideNetwork, type MinPrefix, type WideNetwork } from './network-width.js';
