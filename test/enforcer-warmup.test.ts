import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra } from './support/infra.js';
import { encodeBan, manualBan } from './support/bans.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { produceOrFail } from './support/kafka.js';
import { exitWithin, freePort, spawnService, type RunningProcess } from './support/processes.js';
import { publishPolicy } from './support/aggregator.js';

const BANS = 200_000;
const BANNED = '203.0.113.99';
const AFTER_READY = 20;

interface Answer {
  allowed: boolean;
  source: string;
  policyId?: string;
}

/**
 * Deliverable 9 (warm-up): a sidecar started with 200,000 bans already in the topic
 * and a policy whose failure mode is closed, polled from its very first answer, never
 * allows the banned address; while its caches load its answers say `warming`.
 */
describe('a restarted sidecar never allows for lack of data', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  let broker: TestBroker;
  let sidecar: RunningProcess | undefined;

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    await publishPolicy(broker.producer, broker.topics.name('policies'), {
      id: 'login-closed',
      key: ['ip'],
      match: { paths: ['/login'] },
      threshold: { count: 5, interval: '1m' },
      action: { type: 'throttle', status: 429 },
      enforcement: { type: 'async', failureMode: 'closed' },
    });
    const expiresAt = Date.now() + 3_600_000;
    const subjects = Array.from({ length: BANS - 1 }, (_, i) => `ip:10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`);
    subjects.push(`ip:${BANNED}`); // last: read last of its partition, so the window a restart leaves is widest
    for (let i = 0; i < subjects.length; i += 5_000) {
      await produceOrFail(
        broker.producer,
        broker.topics.name('bans'),
        subjects.slice(i, i + 5_000).map((s) => ({ key: s, value: encodeBan(manualBan(s, { expiresAt })) })),
      );
    }
  }, 180_000);

  afterAll(async () => {
    if (sidecar) {
      sidecar.child.kill('SIGTERM');
      await exitWithin(sidecar, 15_000).catch(() => sidecar!.child.kill('SIGKILL'));
    }
    await broker?.close();
  });

  it('answers every check of the banned address with a denial, saying `warming` until it has caught up', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    sidecar = spawnService('enforcer', { ...broker.env, REDIS_URL: redisUrl, HTTP_PORT: String(port), LOG_LEVEL: 'warn', ENFORCER_REDIS_KEY_PREFIX: broker.topics.prefix });
    const answers: { path: string; ready: boolean; answer: Answer }[] = [];
    let ready = false;
    let afterReady = 0;
    const deadline = Date.now() + 90_000;
    const readiness = (async () => {
      while (!ready && Date.now() < deadline) {
        ready = await fetch(`${url}/readyz`).then(
          (r) => r.status === 200,
          () => false,
        );
        if (!ready) await new Promise((r) => setTimeout(r, 20));
      }
    })();
    for (let i = 0; afterReady < AFTER_READY && Date.now() < deadline; i++) {
      const path = i % 2 === 0 ? '/login' : '/products';
      const wasReady = ready;
      const res = await fetch(`${url}/v1/check`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ip: BANNED, method: 'GET', host: 'shop.example', path }),
      }).catch(() => undefined); // not listening yet
      if (!res) {
        await new Promise((r) => setTimeout(r, 2));
        continue;
      }
      answers.push({ path, ready: wasReady, answer: (await res.json()) as Answer });
      if (wasReady) afterReady++;
    }
    await readiness;
    expect(ready, sidecar.output()).toBe(true);

    const allowed = answers.filter((a) => a.answer.allowed);
    expect(allowed, `${allowed.length} of ${answers.length} answers allowed the banned address`).toEqual([]);
    const warming = answers.filter((a) => a.answer.source === 'warming');
    expect(warming.length, 'answers given while the caches loaded').toBeGreaterThan(0);
    // The policy's failure mode decides /login; ENFORCER_WARMUP_MODE (closed by default) the path no policy matches.
    expect(new Set(warming.map((a) => `${a.path} ${a.answer.policyId}`))).toEqual(new Set(['/login login-closed', '/products warm-up']));
    expect(answers.filter((a) => a.ready).every((a) => a.answer.source === 'ban')).toBe(true);
    console.log(`warm-up: ${answers.length} answers, ${warming.length} while warming, ${answers.filter((a) => a.answer.source === 'ban').length} by the ban`);
  }, 120_000);
});
