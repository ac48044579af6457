export { createEnforcerService, enforcerEnv, type EnforcerConfig } from './service.js';
export { createEnforcer, type Enforcer, type EnforcerOptions, type Decision, type HardLimiter } from './enforcer.js';
export { decisionHeaders, problemBody } from './http/rate-limit-headers.js';
export { banstreamPlugin, type BanstreamPluginOptions, type EventSink } from './plugin.js';
export { createHardLimiter, hardLimitEnv, hardLimiterSettings, type HardLimiterOptions } from './hard/index.js';
export { enforcerMetrics } from './metrics.js';
export { hardLimitMetrics } from './hard/metrics.js';
