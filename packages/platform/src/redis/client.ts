import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../logging/logger.js';

export type { Redis };

export interface RedisClientOptions {
  url: string;
  logger: Logger;
  /** Upper bound for one command; hard-limit checks pass a few milliseconds. */
  commandTimeoutMs?: number;
  /** Prefix every key with this (tests isolate themselves with a random one). */
  keyPrefix?: string;
}

/**
 * An ioredis client that fails fast instead of queueing: with Redis down, commands
 * are rejected at once (no offline queue) so callers apply their failure mode, and
 * the client keeps reconnecting in the background with a capped backoff.
 */
export function createRedis(options: RedisClientOptions): Redis {
  const log = options.logger.child({ component: 'redis' });
  const redisOptions: RedisOptions = {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    enableAutoPipelining: true,
    retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 2_000),
  };
  if (options.commandTimeoutMs !== undefined) redisOptions.commandTimeout = options.commandTimeoutMs;
  if (options.keyPrefix !== undefined) redisOptions.keyPrefix = options.keyPrefix;
  const redis = new Redis(options.url, redisOptions);
  let lastError = '';
  // Log a changed error once, not every reconnect attempt.
  redis.on('error', (err: Error) => {
    if (err.message !== lastError) log.warn({ err: err.message }, 'redis connection error');
    lastError = err.message;
  });
  redis.on('ready', () => {
    if (lastError !== '') log.info('redis connection restored');
    lastError = '';
  });
  return redis;
}
