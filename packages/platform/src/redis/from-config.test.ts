import { describe, expect, it } from 'vitest';
import { isBanstreamError } from '@banstream/core';
import { loadConfig } from '../config/load.js';
import { redisClientPlan } from './client.js';
import { redisConnectionFromConfig, redisEnv } from './from-config.js';

const FILES: Record<string, string> = {
  '/run/secrets/redis-password': 'hunter2\n',
  '/etc/redis/ca.pem': 'CA PEM',
  '/etc/redis/client.pem': 'CERT PEM',
  '/etc/redis/client.key': 'KEY PEM',
  '/run/secrets/empty': '\n',
};

function readFile(path: string): string {
  const text = FILES[path];
  if (text === undefined) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT' });
  return text;
}

function connectionOf(source: Record<string, string>) {
  return redisConnectionFromConfig(loadConfig(redisEnv, source), readFile);
}

function problemsOf(source: Record<string, string>): string {
  try {
    connectionOf(source);
  } catch (error) {
    expect(isBanstreamError(error, 'CONFIG_INVALID')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected a CONFIG_INVALID error');
}

describe('REDIS_* variables → connection', () => {
  it('standalone by default, from REDIS_URL, as before', () => {
    expect(connectionOf({ REDIS_URL: 'redis://127.0.0.1:6379' })).toEqual({ mode: 'standalone', url: 'redis://127.0.0.1:6379' });
  });

  it('cluster: seed nodes (IPv6 in brackets), ACL user and the password from its file', () => {
    expect(
      connectionOf({
        REDIS_MODE: 'cluster',
        REDIS_CLUSTER_NODES: 'redis-1:6379,10.0.0.2:7000,[::1]:7001',
        REDIS_USERNAME: 'enforcer',
        REDIS_PASSWORD_FILE: '/run/secrets/redis-password',
      }),
    ).toEqual({
      mode: 'cluster',
      nodes: [
        { host: 'redis-1', port: 6379 },
        { host: '10.0.0.2', port: 7000 },
        { host: '::1', port: 7001 },
      ],
      username: 'enforcer',
      password: 'hunter2',
    });
  });

  it("sentinel with TLS: CA, client certificate and key read from their files; the Sentinels' own password", () => {
    expect(
      connectionOf({
        REDIS_MODE: 'sentinel',
        REDIS_SENTINELS: 's1:26379,s2:26379,s3:26379',
        REDIS_SENTINEL_MASTER: 'mymaster',
        REDIS_SENTINEL_PASSWORD_FILE: '/run/secrets/redis-password',
        REDIS_PASSWORD: 'pw',
        REDIS_TLS: 'true',
        REDIS_TLS_CA_FILE: '/etc/redis/ca.pem',
        REDIS_TLS_CERT_FILE: '/etc/redis/client.pem',
        REDIS_TLS_KEY_FILE: '/etc/redis/client.key',
      }),
    ).toEqual({
      mode: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
        { host: 's3', port: 26379 },
      ],
      masterName: 'mymaster',
      sentinelPassword: 'hunter2',
      password: 'pw',
      tls: { ca: 'CA PEM', cert: 'CERT PEM', key: 'KEY PEM' },
    });
  });

  it('a rediss:// URL turns TLS on, so a CA file may go with it; REDIS_TLS alone gives the system CAs', () => {
    expect(connectionOf({ REDIS_URL: 'rediss://r:6380', REDIS_TLS_CA_FILE: '/etc/redis/ca.pem' })).toEqual({ mode: 'standalone', url: 'rediss://r:6380', tls: { ca: 'CA PEM' } });
    expect(connectionOf({ REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: 'r:1', REDIS_TLS: 'true' })).toEqual({ mode: 'cluster', nodes: [{ host: 'r', port: 1 }], tls: {} });
  });

  it("names each mode's missing variable, and another mode's variable set by mistake", () => {
    expect(problemsOf({})).toBe('invalid configuration:\n  REDIS_URL: missing; required with REDIS_MODE=standalone');
    const cluster = problemsOf({ REDIS_MODE: 'cluster', REDIS_URL: 'redis://r:1' });
    expect(cluster).toContain('REDIS_CLUSTER_NODES: missing; required with REDIS_MODE=cluster');
    expect(cluster).toContain('REDIS_URL: set, but REDIS_MODE is cluster');
    const forgotten = problemsOf({ REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_MASTER: 'm' });
    expect(forgotten).toContain('REDIS_URL: missing; required with REDIS_MODE=standalone');
    expect(forgotten).toContain('REDIS_SENTINELS: set, but REDIS_MODE is standalone');
    expect(forgotten).toContain('REDIS_SENTINEL_MASTER: set, but REDIS_MODE is standalone');
    expect(problemsOf({ REDIS_MODE: 'sentinel', REDIS_SENTINELS: 's:26379' })).toContain('REDIS_SENTINEL_MASTER: missing; required with REDIS_MODE=sentinel');
    expect(problemsOf({ REDIS_URL: 'redis://r:1', REDIS_SENTINEL_PASSWORD: 'x' })).toContain('REDIS_SENTINEL_PASSWORD: set, but REDIS_MODE is standalone');
  });

  it('refuses two passwords, an unreadable or empty password file, TLS files without TLS, half a client certificate; never quotes the password', () => {
    expect(problemsOf({ REDIS_URL: 'redis://r:1', REDIS_PASSWORD: 'hunter2', REDIS_PASSWORD_FILE: '/run/secrets/redis-password' })).toContain('REDIS_PASSWORD_FILE: set together with REDIS_PASSWORD');
    expect(problemsOf({ REDIS_URL: 'redis://r:1', REDIS_PASSWORD_FILE: '/nowhere' })).toContain('REDIS_PASSWORD_FILE: cannot read /nowhere: ENOENT');
    expect(problemsOf({ REDIS_URL: 'redis://r:1', REDIS_PASSWORD_FILE: '/run/secrets/empty' })).toContain('REDIS_PASSWORD_FILE: /run/secrets/empty is empty');
    expect(problemsOf({ REDIS_URL: 'redis://r:1', REDIS_TLS_CA_FILE: '/etc/redis/ca.pem' })).toContain('REDIS_TLS_CA_FILE: set, but TLS is off');
    expect(problemsOf({ REDIS_URL: 'redis://r:1', REDIS_TLS: 'true', REDIS_TLS_CERT_FILE: '/etc/redis/client.pem' })).toContain('REDIS_TLS_KEY_FILE: missing; a client certificate needs both');
    expect(problemsOf({ REDIS_URL: 'redis://r:1', REDIS_TLS: 'true', REDIS_TLS_CA_FILE: '/etc/none.pem' })).toContain('REDIS_TLS_CA_FILE: cannot read /etc/none.pem: ENOENT');
    const both = problemsOf({ REDIS_MODE: 'cluster', REDIS_PASSWORD: 'hunter2', REDIS_PASSWORD_FILE: '/run/secrets/redis-password' });
    expect(both).not.toContain('hunter2');
  });

  it('loadConfig rejects a bad mode and a malformed node list, naming the variable', () => {
    expect(() => loadConfig(redisEnv, { REDIS_MODE: 'replicated' })).toThrow(/REDIS_MODE: expected standalone, cluster or sentinel/);
    expect(() => loadConfig(redisEnv, { REDIS_MODE: 'cluster', REDIS_CLUSTER_NODES: 'redis-1' })).toThrow(/REDIS_CLUSTER_NODES: expected a comma-separated list of host:port/);
    expect(() => loadConfig(redisEnv, { REDIS_MODE: 'sentinel', REDIS_SENTINELS: 's1:26379;s2:26379' })).toThrow(/REDIS_SENTINELS: expected/);
  });
});

describe('connection → ioredis client options', () => {
  const failFast = { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, enableAutoPipelining: true };

  it('standalone: the URL, fail-fast options, the ACL user and TLS', () => {
    const plan = redisClientPlan({ mode: 'standalone', url: 'rediss://r:6380', username: 'u', password: 'p', tls: { ca: 'CA' } });
    expect(plan).toMatchObject({ kind: 'standalone', url: 'rediss://r:6380', options: { ...failFast, username: 'u', password: 'p', tls: { ca: 'CA' } } });
  });

  it('sentinel: sentinels and master name; TLS on the sentinels too, and their own user and password', () => {
    const plan = redisClientPlan({
      mode: 'sentinel',
      sentinels: [{ host: 's1', port: 26379 }],
      masterName: 'mymaster',
      username: 'u',
      password: 'p',
      sentinelUsername: 'su',
      sentinelPassword: 'sp',
      tls: { ca: 'CA', cert: 'C', key: 'K' },
    });
    expect(plan).toMatchObject({
      kind: 'sentinel',
      options: {
        ...failFast,
        sentinels: [{ host: 's1', port: 26379 }],
        name: 'mymaster',
        username: 'u',
        password: 'p',
        sentinelUsername: 'su',
        sentinelPassword: 'sp',
        tls: { ca: 'CA', cert: 'C', key: 'K' },
        enableTLSForSentinelMode: true,
        sentinelTLS: { ca: 'CA', cert: 'C', key: 'K' },
      },
    });
  });

  it("sentinel without TLS leaves the sentinels in plain TCP, and never gives them the data nodes' password", () => {
    const plan = redisClientPlan({ mode: 'sentinel', sentinels: [{ host: 's1', port: 26379 }], masterName: 'm', password: 'p' });
    expect(plan.options).not.toHaveProperty('tls');
    expect(plan.options).not.toHaveProperty('enableTLSForSentinelMode');
    expect(plan.options).not.toHaveProperty('sentinelPassword');
  });

  it('cluster: seed nodes; the cluster client owns the offline queue and reconnects, its nodes get the user, password and TLS', () => {
    const plan = redisClientPlan({ mode: 'cluster', nodes: [{ host: 'n1', port: 7000 }], username: 'u', password: 'p', tls: {} }, { commandTimeoutMs: 50 });
    expect(plan.kind).toBe('cluster');
    if (plan.kind !== 'cluster') return;
    expect(plan.nodes).toEqual([{ host: 'n1', port: 7000 }]);
    // No auto-pipelining: ioredis would group script calls by the slot of their key count.
    expect(plan.options).toMatchObject({ lazyConnect: true, enableOfflineQueue: false, enableAutoPipelining: false, slotsRefreshInterval: 1_000 });
    // No cluster ready check: when it fails, ioredis's connect() never settles (test/redis-cluster.test.ts).
    expect(plan.options.enableReadyCheck).toBe(false);
    expect(plan.options.redisOptions).toMatchObject({ username: 'u', password: 'p', tls: {}, maxRetriesPerRequest: 0, commandTimeout: 50 });
    // ioredis refuses these per node in a Cluster.
    for (const owned of ['enableOfflineQueue', 'retryStrategy', 'lazyConnect', 'enableAutoPipelining']) expect(plan.options.redisOptions).not.toHaveProperty(owned);
  });
});
