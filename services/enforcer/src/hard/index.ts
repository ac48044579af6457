export { createHardLimiter, type HardLimiterOptions } from './hard-limiter.js';
export { hardLimitEnv, hardLimiterSettings, type HardLimitConfig } from './config.js';
export { hardLimitKey } from './keys.js';
export { hardLimitScript, hardLimitScripts, HARD_LIMIT_LUA_DIR } from './scripts.js';
export type { BreakerOptions, BreakerState } from './breaker.js';
export type { HardLimitItem, HardLimitPolicy, HardLimiter, LimitReply } from './types.js';
