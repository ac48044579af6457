export { createHardLimiter, type HardLimiterOptions } from './hard-limiter.js';
export { hardLimitEnv, hardLimiterSettings, type HardLimitConfig } from './config.js';
export { ALGORITHM_TAG, hardLimitKey } from './keys.js';
export { hardLimitScript, HARD_LIMIT_LUA_DIR } from './scripts.js';
export type { BreakerOptions, BreakerState } from './breaker.js';
export type { HardLimitItem, HardLimitPolicy, HardLimiter, LimitReply } from './types.js';
