import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ban } from '@banstream/schemas';
import { testInfra, uniqueName, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { exitWithin, freePort, spawnService, type RunningProcess } from './support/processes.js';
import { decodeBan, event, publishEvents, publishPolicy, startAggregator, stopAggregators, TopicTail, type Aggregator } from './support/aggregator.js';

interface Decision {
  allowed: boolean;
  status: number;
  source: string;
  policyId?: string;
  reason: string;
}

/**
 * Status conditions choose which responses count, not which requests are checked: the
 * real aggregator counts only failed logins (401) and publishes a ban on the path, or
 * on the address and path; the real enforcer sidecar, which checks a request before
 * any response exists, must then deny the next request to that path.
 */
describe('status-matched policies at the enforcer', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  const suffix = uniqueName('p').slice(-8);
  const loginPath = `/login-${suffix}`;
  const adminPath = `/admin-${suffix}`;
  const apiPath = `/api-${suffix}`;
  let broker: TestBroker;
  let aggregator: Aggregator | undefined;
  let enforcer: RunningProcess | undefined;
  let enforcerUrl = '';
  let bans: TopicTail<Ban>;

  const failures = { match: { methods: ['POST'], statuses: [401] }, threshold: { count: 5, interval: '1m' }, mode: 'enforce' };

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    const policies = broker.topics.name('policies');
    await publishPolicy(broker.producer, policies, {
      id: 'failures-per-path',
      ...failures,
      match: { ...failures.match, paths: [loginPath] },
      key: ['path'],
      action: { type: 'ban', banDuration: '10m', status: 403 },
    });
    await publishPolicy(broker.producer, policies, {
      id: 'failures-per-ip-path',
      ...failures,
      match: { ...failures.match, paths: [adminPath] },
      key: ['ip', 'path'],
      action: { type: 'ban', banDuration: '10m', status: 403 },
    });
    await publishPolicy(broker.producer, policies, {
      id: 'errors-per-path',
      ...failures,
      match: { ...failures.match, statuses: undefined, statusClasses: ['5xx'], pathPrefixes: [apiPath] },
      key: ['path'],
      action: { type: 'throttle', status: 429 },
    });
    aggregator = await startAggregator({ ...broker.env, AGGREGATOR_TICK_MS: '20', AGGREGATOR_GROUP_ID: `${broker.topics.prefix}aggregator` });
    const port = await freePort();
    enforcer = spawnService('enforcer', { ...broker.env, REDIS_URL: redisUrl, ENFORCER_REDIS_KEY_PREFIX: broker.topics.prefix, HTTP_PORT: String(port), LOG_LEVEL: 'warn' });
    enforcerUrl = `http://127.0.0.1:${port}`;
    await waitUntil(
      async () => (await fetch(`${enforcerUrl}/readyz`)).status === 200,
      () => `enforcer ready\n${enforcer!.output()}`,
      60_000,
      50,
    );
    bans = await new TopicTail(broker.kafka, broker.topics.name('bans'), decodeBan).start();
  }, 120_000);

  afterAll(async () => {
    if (enforcer) {
      enforcer.child.kill('SIGTERM');
      await exitWithin(enforcer, 15_000).catch(() => enforcer!.child.kill('SIGKILL'));
    }
    if (aggregator) await stopAggregators([aggregator], 15_000);
    await bans?.stop();
    await broker?.close();
  });

  const check = async (ip: string, path: string): Promise<Decision> => {
    const res = await fetch(`${enforcerUrl}/v1/check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ip, method: 'POST', host: 'shop.example', path }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Decision;
  };
  const failedLogins = (ips: string[], path: string, status = 401) => ips.map((ip, i) => event(ip, Date.now() - ips.length + i, { method: 'POST', path, status }));
  const banOf = (policyId: string) => waitUntil(() => bans.records.find((r) => r.value?.policyId === policyId)?.value ?? undefined, `a ban from ${policyId}\n${aggregator!.proc.output()}`);

  it('denies every request to a path banned for its failed logins, from any address', async () => {
    expect((await check('198.51.100.20', loginPath)).allowed).toBe(true);
    // Successful logins do not count: only the 401s (six, from six networks) cross the threshold of 5.
    await publishEvents(broker.producer, broker.topics.name('events'), failedLogins(['203.0.113.1', '203.0.113.2', '203.0.113.3'], loginPath, 200));
    await publishEvents(
      broker.producer,
      broker.topics.name('events'),
      failedLogins(
        Array.from({ length: 6 }, (_, i) => `192.0.${i + 2}.9`),
        loginPath,
      ),
    );
    const ban = await banOf('failures-per-path');
    expect(ban.subject).toBe(`path:${loginPath}`);
    const denied = await waitUntil(
      async () => {
        const d = await check('198.51.100.20', loginPath);
        return d.allowed ? undefined : d;
      },
      'the enforcer to deny the banned path',
      20_000,
      50,
    );
    expect(denied).toMatchObject({ status: 403, source: 'ban', policyId: 'failures-per-path' });
    expect((await check('198.51.100.21', loginPath)).allowed).toBe(false);
    expect((await check('198.51.100.20', `${loginPath}-other`)).allowed).toBe(true);
  });

  it('denies the address on the path it failed on, and only there', async () => {
    await publishEvents(broker.producer, broker.topics.name('events'), failedLogins(Array(6).fill('203.0.113.66'), adminPath));
    const ban = await banOf('failures-per-ip-path');
    expect(ban.subject).toBe(`ip:203.0.113.66|path:${adminPath}`);
    const denied = await waitUntil(
      async () => {
        const d = await check('203.0.113.66', adminPath);
        return d.allowed ? undefined : d;
      },
      'the enforcer to deny the address on that path',
      20_000,
      50,
    );
    expect(denied).toMatchObject({ status: 403, source: 'ban', policyId: 'failures-per-ip-path' });
    expect((await check('203.0.113.66', `${adminPath}/x`)).allowed).toBe(true);
    expect((await check('203.0.113.67', adminPath)).allowed).toBe(true);
  });

  it('throttles a path from the shared count of its server errors', async () => {
    const errors = Array.from({ length: 40 }, (_, i) => event(`192.0.${(i % 20) + 10}.1`, Date.now() - 40 + i, { method: 'POST', path: apiPath, status: 503 }));
    await publishEvents(broker.producer, broker.topics.name('events'), errors);
    // 40 against a limit of 5: seven requests in eight are refused once the count arrives.
    const throttled = await waitUntil(
      async () => {
        const d = await check('198.51.100.30', apiPath);
        return d.allowed ? undefined : d;
      },
      'the enforcer to throttle the path',
      20_000,
      20,
    );
    expect(throttled).toMatchObject({ status: 429, source: 'throttle', policyId: 'errors-per-path' });
  });
});
