export { createControlService, controlEnv, type ControlConfig } from './service.js';
export { hashToken, newToken, tokenEntryLine, TokenBook, type Principal } from './auth/tokens.js';
export { ROLES, PERMISSIONS, type Role, type Permission } from './auth/roles.js';
export type { BacktestReport, PolicyOutcome, BanOutcome } from './backtest/backtest.js';
export type { PlannedChange } from './policies/plan.js';
export { DEFAULT_MIN_PREFIX, describeWide, wideNetwork, type MinPrefix, type WideNetwork } from './guards/index.js';
export { controlMetrics } from './metrics.js';
