export { createControlService, controlEnv, type ControlConfig } from './service.js';
export { TokenBook, type Principal } from './auth/tokens.js';
export { controlMetrics } from './metrics.js';
