import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createMetricsRegistry, createRedisClient, loadConfig, redisConnectionFromConfig, redisEnv, type RedisClient } from '@banstream/platform';
import { createHardLimiter, type HardLimitPolicy } from '../services/enforcer/src/hard/index.js';
import { captureLogger, waitUntil } from './support/infra.js';
import { freePort } from './support/processes.js';

const run = promisify(execFile);

/**
 * REDIS_TLS with a CA file and a client certificate, against a redis-server of the
 * test's own that speaks TLS only and requires client certificates; certificates
 * made here with openssl.
 */
const POLICY: HardLimitPolicy = {
  id: 'tls-limit',
  mode: 'enforce',
  threshold: { count: 2, intervalMs: 3_600_000 },
  action: { type: 'throttle', status: 429 },
  enforcement: { type: 'hard', failureMode: 'closed', algorithm: 'sliding-window' },
};

describe('hard limits over TLS with a client certificate', () => {
  let dir: string;
  let port: number;
  let server: ChildProcess | undefined;
  const clients: RedisClient[] = [];
  const log = captureLogger();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'banstream-redis-tls-'));
    const at = (f: string) => join(dir, f);
    const ssl = (...args: string[]) => run('openssl', args, { cwd: dir, timeout: 30_000 });
    await ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '1', '-subj', '/CN=banstream test CA');
    writeFileSync(at('server.ext'), 'subjectAltName=IP:127.0.0.1\n');
    for (const who of ['server', 'client']) {
      await ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', at(`${who}.key`), '-out', at(`${who}.csr`), '-subj', `/CN=${who}`);
      const ext = who === 'server' ? ['-extfile', at('server.ext')] : [];
      await ssl('x509', '-req', '-in', at(`${who}.csr`), '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-CAcreateserial', '-out', at(`${who}.pem`), '-days', '1', ...ext);
    }
    port = await freePort();
    // TLS only (no plain port), client certificates required.
    server = spawn(
      'redis-server',
      [
        '--port',
        '0',
        '--tls-port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--tls-cert-file',
        at('server.pem'),
        '--tls-key-file',
        at('server.key'),
        '--tls-ca-cert-file',
        at('ca.pem'),
        '--tls-auth-clients',
        'yes',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
      ],
      { stdio: 'ignore' },
    );
    const tlsArgs = ['--tls', '--cacert', at('ca.pem'), '--cert', at('client.pem'), '--key', at('client.key')];
    await waitUntil(async () => (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...tlsArgs, 'PING'])).stdout.trim() === 'PONG', 'the TLS redis-server to answer PING', 10_000);
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) c.disconnect();
    if (server && server.exitCode === null) {
      const exited = new Promise((r) => server!.once('exit', r));
      server.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  function clientOf(source: Record<string, string>): RedisClient {
    const client = createRedisClient(redisConnectionFromConfig(loadConfig(redisEnv, source)), log.logger);
    clients.push(client);
    return client;
  }

  it('with REDIS_TLS, the CA file and the client certificate, checks are decided by Redis', async () => {
    const client = clientOf({
      REDIS_URL: `redis://127.0.0.1:${port}`,
      REDIS_TLS: 'true',
      REDIS_TLS_CA_FILE: join(dir, 'ca.pem'),
      REDIS_TLS_CERT_FILE: join(dir, 'client.pem'),
      REDIS_TLS_KEY_FILE: join(dir, 'client.key'),
    });
    await client.connect();
    const limiter = createHardLimiter({ redis: client, logger: log.logger, registry: createMetricsRegistry('enforcer-tls', { defaultMetrics: false }), timeoutMs: 2_000 });
    await limiter.warmUp();
    const decided = [];
    for (let i = 0; i < 3; i++) decided.push((await limiter.check([{ policy: POLICY, subject: 'ip:192.0.2.7' }], Date.now()))[0]!);
    expect(decided.map((c) => [c.source, c.deny])).toEqual([
      ['hard-limit', false],
      ['hard-limit', false],
      ['hard-limit', true],
    ]);
    limiter.close();
  });

  it('without the client certificate, or without the CA (system CAs do not know this one), no connection is made', async () => {
    const noCert = clientOf({ REDIS_URL: `rediss://127.0.0.1:${port}`, REDIS_TLS_CA_FILE: join(dir, 'ca.pem') });
    await expect(noCert.connect()).rejects.toThrow();
    const noCa = clientOf({ REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_TLS: 'true', REDIS_TLS_CERT_FILE: join(dir, 'client.pem'), REDIS_TLS_KEY_FILE: join(dir, 'client.key') });
    await expect(noCa.connect()).rejects.toThrow();
    // The reason is logged once: the server's certificate is not trusted.
    expect(log.lines().some((l) => l.msg === 'redis connection error' && /certificate/i.test(String(l.err)))).toBe(true);
  });
});
