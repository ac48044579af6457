import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Admin, Kafka, Producer } from 'kafkajs';
import { SCHEMA_NAMES } from '@banstream/schemas';
import { ensureDebianPackage } from '../scripts/stack/index.mjs';
import { testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { produceOrFail } from './support/kafka.js';
import { exitWithin, freePort, REPO_ROOT, spawnService, type RunningProcess } from './support/processes.js';
import { catalog, publishPolicy } from './support/aggregator.js';

/** A real nginx (Debian's) in front of an app, asking the enforcer sidecar through auth_request. */
describe('enforcer behind nginx auth_request', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  let topics: TestBroker['topics'];
  let broker: TestBroker | undefined;
  let sidecar: RunningProcess;
  let app: Server;
  let nginx: ChildProcess;
  let site = '';

  beforeAll(async () => {
    ensureDebianPackage('nginx', 'nginx-light', (line) => console.log(`[nginx] ${line}`));
    broker = await connectTestBroker(kafkaBrokers, 3);
    ({ kafka, admin, producer, topics } = broker);
    await publishPolicy(producer, topics.name('policies'), { id: 'api-per-ip', key: ['ip'], threshold: { count: 10, interval: '1m' }, action: { type: 'throttle', status: 429 } });

    const [enforcerPort, appPort, nginxPort] = await Promise.all([freePort(), freePort(), freePort()]);
    sidecar = spawnService('enforcer', { KAFKA_BROKERS: kafkaBrokers, REDIS_URL: redisUrl, TOPIC_PREFIX: topics.prefix, TOPIC_PARTITIONS: '3', HTTP_PORT: String(enforcerPort), LOG_LEVEL: 'warn' });
    await waitUntil(async () => (await fetch(`http://127.0.0.1:${enforcerPort}/readyz`)).status === 200, `enforcer ready\n${sidecar.output()}`, 60_000, 50);
    app = createServer((_req, res) => res.end('hello from the app'));
    await new Promise<void>((r) => app.listen(appPort, '127.0.0.1', r));

    const dir = mkdtempSync(join(tmpdir(), 'banstream-nginx-'));
    const server = readFileSync(join(REPO_ROOT, 'examples/nginx/banstream-server.conf'), 'utf8')
      .replaceAll('@LISTEN@', `127.0.0.1:${nginxPort}`).replaceAll('@ENFORCER@', `127.0.0.1:${enforcerPort}`).replaceAll('@UPSTREAM@', `127.0.0.1:${appPort}`);
    const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${join(dir, t)};`).join('\n  ');
    writeFileSync(join(dir, 'nginx.conf'), `daemon off;\nmaster_process off;\npid ${join(dir, 'nginx.pid')};\nerror_log ${join(dir, 'error.log')} warn;\nevents {}\nhttp {\n  access_log off;\n  ${temp}\n${server}\n}\n`);
    nginx = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: 'inherit' });
    site = `http://127.0.0.1:${nginxPort}`;
    await waitUntil(async () => (await fetch(`${site}/`)).status === 200, 'nginx to serve the app', 20_000, 50);
  }, 120_000);

  afterAll(async () => {
    nginx?.kill('SIGTERM');
    app?.close();
    if (sidecar) {
      sidecar.child.kill('SIGTERM');
      await exitWithin(sidecar, 15_000);
    }
    await broker?.close();
  });

  it('lets a clean client through (the sidecar answers 204)', async () => {
    const res = await fetch(`${site}/products`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello from the app');
  });

  it('answers 403 with Retry-After for a banned client', async () => {
    const ban = catalog.codec(SCHEMA_NAMES.ban).encode({
      banId: 'nginx-ban', subject: 'ip:127.0.0.1', policyId: 'manual', reason: 'test', evidenceCount: 0, windowSeconds: 0, startedAt: Date.now(),
      expiresAt: Date.now() + 120_000, preview: false, escalationLevel: 0, origin: 'manual', httpStatus: 403, createdBy: 'tests',
    });
    await produceOrFail(producer, topics.name('bans'), [{ key: 'ip:127.0.0.1', value: ban }]);
    const res = await waitUntil(async () => {
      const r = await fetch(`${site}/products`);
      return r.status === 403 ? r : undefined;
    }, 'nginx to refuse the banned client', 10_000, 20);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(100);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    await produceOrFail(producer, topics.name('bans'), [{ key: 'ip:127.0.0.1', value: null as unknown as Buffer }]);
    await waitUntil(async () => (await fetch(`${site}/products`)).status === 200, 'the ban lifted', 10_000, 20);
  });

  it('answers 429 with RateLimit headers for a throttled client', async () => {
    const count = catalog.codec(SCHEMA_NAMES.windowCount).encode({ policyId: 'api-per-ip', subject: 'ip:127.0.0.1', kind: 'subject', count: 1_000_000, windowSeconds: 60, threshold: 10, observedAt: Date.now(), final: false });
    await produceOrFail(producer, topics.name('counts'), [{ key: 'api-per-ip|ip:127.0.0.1', value: count }]);
    const res = await waitUntil(async () => {
      const r = await fetch(`${site}/products`);
      return r.status === 429 ? r : undefined;
    }, 'nginx to throttle the client', 10_000, 20);
    expect(res.headers.get('ratelimit-policy')).toBe('"api-per-ip";q=10;w=60');
    expect(res.headers.get('ratelimit')).toMatch(/^"api-per-ip";r=0;t=\d+$/);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
