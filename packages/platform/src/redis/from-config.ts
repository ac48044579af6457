import { env } from '../config/env.js';
import type { Logger } from '../logging/logger.js';
import { createRedis, type Redis } from './client.js';
import { withDeadline } from '../lifecycle/deadline.js';

export const redisEnv = { REDIS_URL: env.REDIS_URL };

export function redisFromConfig(config: { REDIS_URL: string }, logger: Logger): Redis {
  return createRedis({ url: config.REDIS_URL, logger });
}

/** A readiness check: Redis answers PING in time. */
export function redisReachable(redis: Redis, timeoutMs: number): () => Promise<boolean> {
  return async () => (await withDeadline(redis.ping(), timeoutMs, 'redis PING', 'REDIS_TIMEOUT')) === 'PONG';
}
