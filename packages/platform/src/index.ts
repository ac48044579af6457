export { countingEnv, env, httpPort, type EnvName } from './config/env.js';
export { loadConfig, type ConfigOf, type EnvSource } from './config/load.js';
export { createLogger, type Logger, type LoggerOptions } from './logging/logger.js';
export { Occasional } from './logging/occasional.js';
export { createMetricsRegistry, counter, gauge, histogram, Registry, tallyCounter, type TallyCounter } from './metrics/registry.js';
export { createHttpServer, opsRoutes } from './http/ops-server.js';
export { jsonPointerToPath, notFoundProblem, problemErrorHandler, ProblemError, requestProblem, sendProblem, sendProblemError, validationProblem, type FieldError } from './http/problem.js';
export { Readiness, type ReadinessCheck, type ReadinessReport } from './lifecycle/readiness.js';
export { runShutdown, type ShutdownStep, type ShutdownReport } from './lifecycle/shutdown.js';
export { withDeadline } from './lifecycle/deadline.js';
export type { Service, ServiceDeps } from './lifecycle/service.js';
export { runService, baseEnv, workerEnv, EXIT } from './service/run-service.js';
export { supervisorMetrics } from './service/workers/metrics.js';
export { RestartBackoff, DEFAULT_RESTART_BACKOFF, type RestartBackoffOptions } from './service/workers/restart-backoff.js';
export {
  createRedis,
  createRedisClient,
  redisClientPlan,
  type Cluster,
  type HostPort,
  type Redis,
  type RedisClient,
  type RedisClientOptions,
  type RedisClientPlan,
  type RedisConnection,
  type RedisTls,
} from './redis/client.js';
export { readLuaScripts, defineLuaScripts, type LuaScript } from './redis/lua-scripts.js';
export { redisConnectionFromConfig, redisEnv, redisFromConfig, redisReachable, type RedisConfig } from './redis/from-config.js';
export { startWatchdog, unwatched, type RecordWatch, type Watchdog, type WatchdogSettings } from './service/watchdog/watchdog.js';
export { TrapStore, type Trap, type StallNote } from './service/watchdog/traps.js';
export type { RunServiceDeps } from './service/run-service.js';
