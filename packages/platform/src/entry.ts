// What a service's entry point and its env declaration need (@banstream/platform/entry),
// without Redis or the HTTP helpers of the index: a supervisor loads only this.
export { runService, baseEnv, workerEnv, EXIT, type RunServiceDeps, type RunServiceOptions, type ServiceFactory } from './service/run-service.js';
export { countingEnv, env, httpPort, type EnvName } from './config/env.js';
export type { ConfigOf } from './config/load.js';
