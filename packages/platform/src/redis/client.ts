import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { ConnectionOptions } from 'node:tls';
import type { Logger } from '../logging/logger.js';

export type { Cluster, Redis };

/** A standalone or Sentinel-managed client (Redis), or a Cluster client: what the hard limiter and readiness checks take. */
export type RedisClient = Redis | Cluster;

export interface RedisClientOptions {
  url: string;
  logger: Logger;
  /** Upper bound for one command; hard-limit checks pass a few milliseconds. */
  commandTimeoutMs?: number;
  /** Prefix every key with this (tests isolate themselves with a random one). */
  keyPrefix?: string;
}

export interface HostPort {
  host: string;
  port: number;
}

/** TLS towards Redis: the system CAs unless `ca` is given; `cert` and `key` for a client certificate. */
export interface RedisTls {
  ca?: string;
  cert?: string;
  key?: string;
}

/** What every shape shares: the ACL user and password, TLS. */
interface RedisAuth {
  username?: string;
  password?: string;
  /** Undefined: plain TCP (a `rediss://` URL still turns TLS on in standalone). */
  tls?: RedisTls;
}

/** Where Redis is, in one of its three production shapes (REDIS_MODE). */
export type RedisConnection =
  | ({ mode: 'standalone'; url: string } & RedisAuth)
  | ({ mode: 'cluster'; nodes: HostPort[] } & RedisAuth)
  | ({ mode: 'sentinel'; sentinels: HostPort[]; masterName: string; sentinelUsername?: string; sentinelPassword?: string } & RedisAuth);

/** The ioredis constructor arguments of a connection: pure, so the mapping is unit-tested. */
export type RedisClientPlan =
  | { kind: 'standalone'; url: string; options: RedisOptions }
  | { kind: 'sentinel'; options: RedisOptions }
  | { kind: 'cluster'; nodes: HostPort[]; options: ClusterOptions };

const retryStrategy = (attempt: number): number => Math.min(50 * 2 ** attempt, 2_000);

/**
 * Fail fast instead of queueing: with Redis down, commands are rejected at once (no
 * offline queue) so callers apply their failure mode, and the client keeps
 * reconnecting in the background with a capped backoff.
 */
function baseOptions(extra: { commandTimeoutMs?: number | undefined; keyPrefix?: string | undefined }): RedisOptions {
  const options: RedisOptions = {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    enableAutoPipelining: true,
    retryStrategy,
  };
  if (extra.commandTimeoutMs !== undefined) options.commandTimeout = extra.commandTimeoutMs;
  if (extra.keyPrefix !== undefined) options.keyPrefix = extra.keyPrefix;
  return options;
}

function tlsOptions(tls: RedisTls): ConnectionOptions {
  const options: ConnectionOptions = {};
  if (tls.ca !== undefined) options.ca = tls.ca;
  if (tls.cert !== undefined) options.cert = tls.cert;
  if (tls.key !== undefined) options.key = tls.key;
  return options;
}

function authOptions(connection: RedisAuth): RedisOptions {
  const options: RedisOptions = {};
  if (connection.username !== undefined) options.username = connection.username;
  if (connection.password !== undefined) options.password = connection.password;
  if (connection.tls !== undefined) options.tls = tlsOptions(connection.tls);
  return options;
}

export function redisClientPlan(connection: RedisConnection, extra: { commandTimeoutMs?: number; keyPrefix?: string } = {}): RedisClientPlan {
  const options = { ...baseOptions(extra), ...authOptions(connection) };
  switch (connection.mode) {
    case 'standalone':
      return { kind: 'standalone', url: connection.url, options };
    case 'sentinel': {
      const sentinel: RedisOptions = { ...options, sentinels: connection.sentinels.map((s) => ({ ...s })), name: connection.masterName };
      // Sentinels often have no password, or their own: never the data nodes' by default.
      if (connection.sentinelUsername !== undefined) sentinel.sentinelUsername = connection.sentinelUsername;
      if (connection.sentinelPassword !== undefined) sentinel.sentinelPassword = connection.sentinelPassword;
      // Sentinels of a TLS deployment speak TLS too, with the same CA and client certificate.
      if (connection.tls !== undefined) {
        sentinel.enableTLSForSentinelMode = true;
        sentinel.sentinelTLS = tlsOptions(connection.tls);
      }
      return { kind: 'sentinel', options: sentinel };
    }
    case 'cluster': {
      // The cluster client owns reconnection and the offline queue; its nodes get the rest.
      const { enableOfflineQueue: _queue, retryStrategy: _retry, lazyConnect, enableAutoPipelining: _pipelining, ...redisOptions } = options;
      return {
        kind: 'cluster',
        nodes: connection.nodes.map((n) => ({ ...n })),
        options: {
          lazyConnect: lazyConnect ?? true,
          enableOfflineQueue: false,
          // Off in a Cluster: ioredis (5.x) files a script command such as `hardLimit` under the
          // slot of its first argument, the key count, so concurrent calls of different slots
          // fail ("All keys in the pipeline should belong to the same slots allocation group").
          // The hard limiter coalesces its checks per slot itself.
          enableAutoPipelining: false,
          // Off: ioredis 5.11 sends its ready check (CLUSTER INFO) to a random node, which with no offline
          // queue fails whenever that node's connection is still opening; the client then reconnects under
          // a new promise and leaves connect()'s pending for good: an enforcer that never started (3 runs
          // of test/redis-cluster.test.ts in 30). Ready now means the slots are known; while the cluster says fail, commands on
          // keys get CLUSTERDOWN and each policy's failure mode decides (docs/operations/redis.md).
          enableReadyCheck: false,
          clusterRetryStrategy: retryStrategy,
          // Learn a promoted replica soon after a failover even when no command was redirected.
          slotsRefreshInterval: 1_000,
          slotsRefreshTimeout: 1_000,
          retryDelayOnFailover: 100,
          redisOptions,
        },
      };
    }
  }
}

/** A standalone client from a URL (tests, benchmarks, and REDIS_MODE=standalone). */
export function createRedis(options: RedisClientOptions): Redis {
  const plan = redisClientPlan({ mode: 'standalone', url: options.url }, options);
  return watched(new Redis(options.url, plan.options), options.logger);
}

/** A client of the shape the connection names: `new Redis(url)`, `new Redis({ sentinels, name })` or `new Cluster(nodes)`. */
export function createRedisClient(connection: RedisConnection, logger: Logger, extra: { commandTimeoutMs?: number; keyPrefix?: string } = {}): RedisClient {
  const plan = redisClientPlan(connection, extra);
  switch (plan.kind) {
    case 'standalone':
      return watched(new Redis(plan.url, plan.options), logger);
    case 'sentinel':
      return watched(new Redis(plan.options), logger);
    case 'cluster':
      return watched(new Cluster(plan.nodes, plan.options), logger);
  }
}

function watched<C extends RedisClient>(client: C, logger: Logger): C {
  const log = logger.child({ component: 'redis' });
  let lastError = '';
  // Log a changed error once, not every reconnect attempt. ioredis's messages name hosts, never the password.
  client.on('error', (err: Error) => {
    if (err.message !== lastError) log.warn({ err: err.message }, 'redis connection error');
    lastError = err.message;
  });
  client.on('ready', () => {
    if (lastError !== '') log.info('redis connection restored');
    lastError = '';
  });
  if (client.isCluster) {
    // A Cluster reports its nodes' errors apart ('node error'), with the node's address; each changed one is logged once.
    const lastByNode = new Map<string, string>();
    client.on('node error', (err: Error, node: string) => {
      if (lastByNode.get(node) !== err.message) log.warn({ err: err.message, node }, 'redis cluster node error');
      lastByNode.set(node, err.message);
    });
  }
  return client;
}
