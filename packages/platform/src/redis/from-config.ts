import { readFileSync } from 'node:fs';
import { BanstreamError } from '@banstream/core';
import { env } from '../config/env.js';
import type { ConfigOf } from '../config/load.js';
import type { Logger } from '../logging/logger.js';
import { createRedisClient, type Cluster, type HostPort, type RedisClient, type RedisConnection, type RedisTls } from './client.js';
import { withDeadline } from '../lifecycle/deadline.js';

export const redisEnv = {
  REDIS_MODE: env.REDIS_MODE,
  REDIS_URL: env.REDIS_URL,
  REDIS_CLUSTER_NODES: env.REDIS_CLUSTER_NODES,
  REDIS_SENTINELS: env.REDIS_SENTINELS,
  REDIS_SENTINEL_MASTER: env.REDIS_SENTINEL_MASTER,
  REDIS_SENTINEL_USERNAME: env.REDIS_SENTINEL_USERNAME,
  REDIS_SENTINEL_PASSWORD: env.REDIS_SENTINEL_PASSWORD,
  REDIS_SENTINEL_PASSWORD_FILE: env.REDIS_SENTINEL_PASSWORD_FILE,
  REDIS_USERNAME: env.REDIS_USERNAME,
  REDIS_PASSWORD: env.REDIS_PASSWORD,
  REDIS_PASSWORD_FILE: env.REDIS_PASSWORD_FILE,
  REDIS_TLS: env.REDIS_TLS,
  REDIS_TLS_CA_FILE: env.REDIS_TLS_CA_FILE,
  REDIS_TLS_CERT_FILE: env.REDIS_TLS_CERT_FILE,
  REDIS_TLS_KEY_FILE: env.REDIS_TLS_KEY_FILE,
};

export type RedisConfig = ConfigOf<typeof redisEnv>;

/** Which variables each mode needs, and which belong to another mode (set by mistake, e.g. REDIS_MODE forgotten). */
const MODE_VARIABLES = {
  standalone: ['REDIS_URL'],
  cluster: ['REDIS_CLUSTER_NODES'],
  sentinel: ['REDIS_SENTINELS', 'REDIS_SENTINEL_MASTER'],
} as const satisfies Record<RedisConfig['REDIS_MODE'], readonly (keyof RedisConfig)[]>;

type ReadFile = (path: string) => string;

function parseHostPorts(list: string): HostPort[] {
  return list.split(',').map((entry) => {
    const at = entry.lastIndexOf(':');
    const host = entry.slice(0, at).replace(/^\[(.*)\]$/, '$1');
    return { host, port: Number(entry.slice(at + 1)) };
  });
}

/**
 * The connection the REDIS_* variables describe, checked across variables (what
 * one variable's schema cannot say): the mode's own variables are present and no
 * other mode's are, the password comes from one place, TLS files are readable and
 * only given with TLS on. Every problem is listed in one CONFIG_INVALID error
 * naming the variable (exit 78 through runService); no secret is ever quoted.
 */
export function redisConnectionFromConfig(config: RedisConfig, readFile: ReadFile = (path) => readFileSync(path, 'utf8')): RedisConnection {
  const problems: string[] = [];
  const mode = config.REDIS_MODE;
  for (const name of MODE_VARIABLES[mode]) {
    if (config[name] === undefined) problems.push(`${name}: missing; required with REDIS_MODE=${mode}`);
  }
  for (const [other, names] of Object.entries(MODE_VARIABLES)) {
    if (other === mode) continue;
    for (const name of names) {
      if (config[name] !== undefined) problems.push(`${name}: set, but REDIS_MODE is ${mode} (it is read with REDIS_MODE=${other} only: set REDIS_MODE, or unset ${name})`);
    }
  }

  if (mode !== 'sentinel') {
    for (const name of ['REDIS_SENTINEL_USERNAME', 'REDIS_SENTINEL_PASSWORD', 'REDIS_SENTINEL_PASSWORD_FILE'] as const) {
      if (config[name] !== undefined) problems.push(`${name}: set, but REDIS_MODE is ${mode} (it is read with REDIS_MODE=sentinel only)`);
    }
  }

  function read(name: keyof RedisConfig, path: string | undefined): string | undefined {
    if (path === undefined) return undefined;
    try {
      return readFile(path);
    } catch (cause) {
      problems.push(`${name}: cannot read ${path}: ${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message}`);
      return undefined;
    }
  }

  function secret(name: 'REDIS_PASSWORD' | 'REDIS_SENTINEL_PASSWORD'): string | undefined {
    const file = `${name}_FILE` as const;
    const path = config[file];
    if (config[name] !== undefined && path !== undefined) {
      problems.push(`${file}: set together with ${name}; give the password one way`);
      return undefined;
    }
    if (path === undefined) return config[name];
    const text = read(file, path);
    if (text === undefined) return undefined;
    const value = text.replace(/\r?\n$/, '');
    if (value === '') problems.push(`${file}: ${path} is empty`);
    return value;
  }
  const password = secret('REDIS_PASSWORD');
  const sentinelPassword = secret('REDIS_SENTINEL_PASSWORD');

  const tlsOn = config.REDIS_TLS || (mode === 'standalone' && config.REDIS_URL?.startsWith('rediss://') === true);
  let tls: RedisTls | undefined;
  const tlsFiles = ['REDIS_TLS_CA_FILE', 'REDIS_TLS_CERT_FILE', 'REDIS_TLS_KEY_FILE'] as const;
  if (!tlsOn) {
    for (const name of tlsFiles) if (config[name] !== undefined) problems.push(`${name}: set, but TLS is off (set REDIS_TLS=true${mode === 'standalone' ? ' or use a rediss:// REDIS_URL' : ''})`);
  } else {
    if ((config.REDIS_TLS_CERT_FILE === undefined) !== (config.REDIS_TLS_KEY_FILE === undefined)) {
      const missing = config.REDIS_TLS_CERT_FILE === undefined ? 'REDIS_TLS_CERT_FILE' : 'REDIS_TLS_KEY_FILE';
      problems.push(`${missing}: missing; a client certificate needs both REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE`);
    }
    tls = {};
    const ca = read('REDIS_TLS_CA_FILE', config.REDIS_TLS_CA_FILE);
    const cert = read('REDIS_TLS_CERT_FILE', config.REDIS_TLS_CERT_FILE);
    const key = read('REDIS_TLS_KEY_FILE', config.REDIS_TLS_KEY_FILE);
    if (ca !== undefined) tls.ca = ca;
    if (cert !== undefined) tls.cert = cert;
    if (key !== undefined) tls.key = key;
  }

  if (problems.length > 0) {
    throw new BanstreamError('CONFIG_INVALID', `invalid configuration:\n  ${problems.join('\n  ')}`, {
      details: { variables: problems.map((p) => p.split(':')[0]) },
    });
  }
  const auth = {
    ...(config.REDIS_USERNAME === undefined ? {} : { username: config.REDIS_USERNAME }),
    ...(password === undefined ? {} : { password }),
    ...(tls === undefined ? {} : { tls }),
  };
  switch (mode) {
    case 'standalone':
      return { mode, url: config.REDIS_URL!, ...auth };
    case 'cluster':
      return { mode, nodes: parseHostPorts(config.REDIS_CLUSTER_NODES!), ...auth };
    case 'sentinel':
      return {
        mode,
        sentinels: parseHostPorts(config.REDIS_SENTINELS!),
        masterName: config.REDIS_SENTINEL_MASTER!,
        ...(config.REDIS_SENTINEL_USERNAME === undefined ? {} : { sentinelUsername: config.REDIS_SENTINEL_USERNAME }),
        ...(sentinelPassword === undefined ? {} : { sentinelPassword }),
        ...auth,
      };
  }
}

/** The client the REDIS_* variables describe; throws CONFIG_INVALID (exit 78) naming what is wrong. */
export function redisFromConfig(config: RedisConfig, logger: Logger): RedisClient {
  return createRedisClient(redisConnectionFromConfig(config), logger);
}

/** A readiness check: Redis answers PING in time (in a Cluster, every master does). */
export function redisReachable(redis: RedisClient, timeoutMs: number): () => Promise<boolean> {
  return async () => {
    const pings = redis.isCluster ? (redis as Cluster).nodes('master').map((node) => node.ping()) : [redis.ping()];
    if (pings.length === 0) return false;
    const replies = await withDeadline(Promise.all(pings), timeoutMs, 'redis PING', 'REDIS_TIMEOUT');
    return replies.every((reply) => reply === 'PONG');
  };
}
