import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { canonicalSubject } from '@banstream/core';
import { SCHEMA_NAMES } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { produceOrFail } from './support/kafka.js';
import { startExampleNginx } from './support/nginx.js';
import { exitWithin, freePort, spawnService, type RunningProcess } from './support/processes.js';
import { catalog } from './support/aggregator.js';

/**
 * nginx hands the sidecar the request target as the client wrote it (`X-Original-URI
 * $request_uri`), and routes (its `location`s) and the application behind it serve
 * `/%61dmin`, `//admin` and `/x/../admin` as `/admin`. A manual ban on `path:/admin`
 * must refuse every such spelling, and nothing else: a real nginx with the shipped
 * example configuration, the enforcer sidecar, the ban through Kafka.
 */
describe('a path ban behind nginx, whatever the spelling', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  let broker: TestBroker | undefined;
  let sidecar: RunningProcess;
  let app: Server;
  let nginx: ChildProcess;
  let nginxPort = 0;
  /** What the application was asked for, as nginx passed it on. */
  const served: string[] = [];

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    const [enforcerPort, appPort, port] = await Promise.all([freePort(), freePort(), freePort()]);
    nginxPort = port;
    sidecar = spawnService('enforcer', {
      KAFKA_BROKERS: kafkaBrokers,
      REDIS_URL: redisUrl,
      TOPIC_PREFIX: broker.topics.prefix,
      TOPIC_PARTITIONS: '3',
      HTTP_PORT: String(enforcerPort),
      LOG_LEVEL: 'warn',
    });
    await waitUntil(
      async () => (await fetch(`http://127.0.0.1:${enforcerPort}/readyz`)).status === 200,
      () => `enforcer ready\n${sidecar.output()}`,
      60_000,
      50,
    );
    app = createServer((req, res) => {
      served.push(req.url ?? '');
      res.end('the application');
    });
    await new Promise<void>((r) => app.listen(appPort, '127.0.0.1', r));

    nginx = startExampleNginx({ nginx: nginxPort, enforcer: enforcerPort, app: appPort }).child;
    await waitUntil(async () => (await send('/')) === 200, 'nginx to serve the application', 20_000, 50);
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

  /**
   * The status nginx answers for this exact request target (fetch would resolve dot
   * segments itself). Not half-closed: nginx takes that for a client gone away.
   */
  function send(target: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const socket = connect(nginxPort, '127.0.0.1', () => socket.write(`GET ${target} HTTP/1.1\r\nHost: shop.example\r\nConnection: close\r\n\r\n`));
      let answer = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (answer += chunk));
      socket.on('error', reject);
      socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
    });
  }

  it('refuses every spelling of a banned path that nginx serves as it, and lets other paths through', async () => {
    const subject = canonicalSubject('path:/admin');
    const ban = catalog.codec(SCHEMA_NAMES.ban).encode({
      banId: 'path-admin',
      subject,
      policyId: 'manual',
      reason: 'test',
      evidenceCount: 0,
      windowSeconds: 0,
      startedAt: Date.now(),
      expiresAt: Date.now() + 120_000,
      preview: false,
      escalationLevel: 0,
      origin: 'manual',
      httpStatus: 403,
      createdBy: 'tests',
    });
    await produceOrFail(broker!.producer, broker!.topics.name('bans'), [{ key: subject, value: ban }]);
    await waitUntil(async () => (await send('/admin')) === 403, 'the ban on /admin applied', 10_000, 20);
    served.length = 0;

    const spellings = ['/admin', '/%61dmin', '/adm%69n', '/%61%64%6D%69%6E', '//admin', '/x/../admin', '/x/%2e%2E/admin', '/./admin', '/admin?next=/', 'http://shop.example/admin'];
    const answers = await Promise.all(spellings.map(async (target) => [target, await send(target)] as const));
    expect(answers.filter(([, status]) => status !== 403)).toEqual([]);
    expect(served.filter((url) => /admin/i.test(url))).toEqual([]); // the application was asked for none of them

    // Near misses are other resources, served.
    for (const target of ['/adminx', '/x/admin', '/admin/x', '/a%2Fdmin', '/x/..admin']) expect(await send(target), target).toBe(200);
  });
});
