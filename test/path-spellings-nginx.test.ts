import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { canonicalSubject } from '@banstream/core';
import { testInfra, waitUntil } from './support/infra.js';
import { encodeBan, manualBan } from './support/bans.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { produceOrFail } from './support/kafka.js';
import { startNginxSidecar, type NginxSidecar } from './support/nginx.js';

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
  let nginx: NginxSidecar | undefined;
  let nginxPort = 0;
  /** What the application was asked for, as nginx passed it on. */
  const served: string[] = [];

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    nginx = await startNginxSidecar({
      enforcerEnv: { KAFKA_BROKERS: kafkaBrokers, REDIS_URL: redisUrl, TOPIC_PREFIX: broker.topics.prefix, TOPIC_PARTITIONS: '3' },
      app: (req, res) => {
        served.push(req.url ?? '');
        res.end('the application');
      },
    });
    nginxPort = nginx.nginxPort;
  }, 120_000);

  afterAll(async () => {
    await nginx?.stop();
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
    const ban = encodeBan(manualBan(subject));
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
