import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Producer } from '@banstream/kafka';
import { SCHEMA_NAMES, type Ban } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { encodeBan, manualBan } from './support/bans.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { produceOrFail } from './support/kafka.js';
import { exitWithin, freePort, spawnService, type RunningProcess } from './support/processes.js';
import { catalog, publishPolicy } from './support/aggregator.js';

interface Sidecar {
  proc: RunningProcess;
  url: string;
}

/** Enforcer sidecars against the real broker and Redis: bans, allowlist, throttle, rebuild. */
describe('enforcer sidecar', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  let producer: Producer;
  let topics: TestBroker['topics'];
  let broker: TestBroker | undefined;
  const sidecars: Sidecar[] = [];

  async function startSidecar(): Promise<Sidecar> {
    const port = await freePort();
    const proc = spawnService('enforcer', {
      KAFKA_BROKERS: kafkaBrokers,
      REDIS_URL: redisUrl,
      TOPIC_PREFIX: topics.prefix,
      TOPIC_PARTITIONS: '3',
      HTTP_PORT: String(port),
      LOG_LEVEL: 'warn',
      // Keys of this run only; a generous timeout, as the failure modes have tests of their own.
      ENFORCER_REDIS_KEY_PREFIX: topics.prefix,
      ENFORCER_REDIS_TIMEOUT_MS: '1000',
    });
    const url = `http://127.0.0.1:${port}`;
    await waitUntil(async () => (await fetch(`${url}/readyz`)).status === 200, `enforcer ready\n${proc.output()}`, 60_000, 50);
    const sidecar = { proc, url };
    sidecars.push(sidecar);
    return sidecar;
  }

  const check = async (s: Sidecar, ip: string, path = '/') => {
    const res = await fetch(`${s.url}/v1/check`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ip, method: 'GET', host: 'shop.example', path }) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
  };
  const publishBan = (b: Ban) => produceOrFail(producer, topics.name('bans'), [{ key: b.subject, value: encodeBan(b) }]);

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    ({ producer, topics } = broker);
  }, 60_000);

  afterAll(async () => {
    for (const s of sidecars) {
      s.proc.child.kill('SIGTERM');
      await exitWithin(s.proc, 15_000).catch(() => s.proc.child.kill('SIGKILL'));
    }
    await broker?.close();
  });

  it('enforces a ban at two instances and lifts it everywhere with its tombstone', async () => {
    const [a, b] = await Promise.all([startSidecar(), startSidecar()]);
    expect((await check(a!, '203.0.113.50')).body.allowed).toBe(true);
    await publishBan(manualBan('ip:203.0.113.50'));
    for (const s of [a!, b!]) {
      const denied = await waitUntil(
        async () => {
          const r = await check(s, '203.0.113.50');
          return r.body.allowed === false ? r : undefined;
        },
        'the ban to reach the enforcer',
        10_000,
        20,
      );
      expect(denied.body).toMatchObject({ status: 403, source: 'ban', policyId: 'manual' });
      expect(Number(denied.headers.get('retry-after'))).toBeGreaterThanOrEqual(599);
    }
    await produceOrFail(producer, topics.name('bans'), [{ key: 'ip:203.0.113.50', value: null as unknown as Buffer }]);
    for (const s of [a!, b!]) await waitUntil(async () => (await check(s, '203.0.113.50')).body.allowed === true, 'the tombstone to lift the ban', 10_000, 20);
    // Every decision is counted by source and result (tallied in process, summed at the scrape).
    const metrics = await (await fetch(`${a!.url}/metrics`)).text();
    const decisions = (labels: string) => Number(metrics.match(new RegExp(`^banstream_enforcer_decisions_total\\{${labels}[^}]*\\} (\\d+)$`, 'm'))?.[1] ?? 0);
    expect(decisions('source="ban",result="deny"')).toBeGreaterThanOrEqual(1);
    expect(decisions('source="none",result="allow"')).toBeGreaterThanOrEqual(2);
  }, 180_000);

  it('bans every address of a banned prefix except an allowlisted one, and stops a ban at its expiry', async () => {
    const s = sidecars[0]!;
    const allow = catalog.codec(SCHEMA_NAMES.allowEntry).encode({ entry: 'ip:198.51.100.20', reason: 'our probe', addedBy: 'tests', addedAt: Date.now(), expiresAt: null });
    await produceOrFail(producer, topics.name('allowlist'), [{ key: 'ip:198.51.100.20', value: allow }]);
    await publishBan(manualBan('cidr:198.51.100.0/24'));
    // Long enough to be read under load before it ends (the feed's own delay is a benchmark's).
    await publishBan(manualBan('ip:192.0.2.77', { expiresAt: Date.now() + 5_000, banId: 'short' }));
    await waitUntil(async () => (await check(s, '198.51.100.99')).body.allowed === false, 'the prefix ban', 10_000, 20);
    expect((await check(s, '198.51.100.1')).body).toMatchObject({ allowed: false, source: 'ban' });
    // The allowlist and the bans are read by feeds of their own, in no order between them.
    await waitUntil(async () => (await check(s, '198.51.100.20')).body.source === 'allowlist', 'the allowlist entry', 10_000, 20);
    expect((await check(s, '198.51.100.20')).body).toMatchObject({ allowed: true, source: 'allowlist' });
    expect((await check(s, '198.51.101.1')).body.allowed).toBe(true);
    await waitUntil(async () => (await check(s, '192.0.2.77')).body.allowed === false, 'the short ban', 10_000, 20);
    await waitUntil(async () => (await check(s, '192.0.2.77')).body.allowed === true, 'the short ban to end without a tombstone', 10_000, 50);
  });

  it('throttles the excess share of a subject whose shared count is over its threshold', async () => {
    const s = sidecars[0]!;
    await publishPolicy(producer, topics.name('policies'), {
      id: 'api-per-ip',
      key: ['ip'],
      match: { pathPrefixes: ['/api/'] },
      threshold: { count: 100, interval: '1m' },
      action: { type: 'throttle', status: 429 },
    });
    const count = catalog
      .codec(SCHEMA_NAMES.windowCount)
      .encode({ policyId: 'api-per-ip', subject: 'ip:192.0.2.200', kind: 'subject', count: 400, windowSeconds: 60, threshold: 100, observedAt: Date.now(), final: false });
    await produceOrFail(producer, topics.name('counts'), [{ key: 'api-per-ip|ip:192.0.2.200', value: count }]);
    await waitUntil(async () => (await check(s, '192.0.2.200', '/api/x')).body.allowed === false, 'the throttle', 10_000, 20);
    let denied = 0;
    for (let i = 0; i < 400; i++) if ((await check(s, '192.0.2.200', '/api/x')).body.allowed === false) denied++;
    // 1 - 100/400 = 75% refused: the admitted rate stays near the threshold.
    expect(denied).toBeGreaterThan(400 * 0.65);
    expect(denied).toBeLessThan(400 * 0.85);
    const allowed = await check(s, '192.0.2.201', '/api/x');
    expect(allowed.headers.get('ratelimit-policy')).toBe('"api-per-ip";q=100;w=60');
  });

  it('rebuilds its caches from the topics before it reports ready after a restart', async () => {
    const old = sidecars.shift()!;
    old.proc.child.kill('SIGTERM');
    await exitWithin(old.proc, 15_000);
    const fresh = await startSidecar();
    expect((await check(fresh, '198.51.100.7')).body).toMatchObject({ allowed: false, source: 'ban' });
    expect((await check(fresh, '198.51.100.20')).body.source).toBe('allowlist');
    const page = (await (await fetch(`${fresh.url}/v1/bans?scope=cidr`)).json()) as { bans: Ban[] };
    expect(page.bans.map((b) => b.subject)).toEqual(['cidr:198.51.100.0/24']);
  }, 180_000);

  it('decides hard policies in Redis: exactly the limit passes, then 429 from the hard limit', async () => {
    const s = sidecars[0]!;
    await publishPolicy(producer, topics.name('policies'), {
      id: 'signup-per-ip',
      key: ['ip'],
      match: { paths: ['/signup'] },
      threshold: { count: 5, interval: '1m' },
      action: { type: 'throttle', status: 429 },
      enforcement: { type: 'hard', failureMode: 'closed' },
      mode: 'enforce',
    });
    await waitUntil(async () => (await check(s, '192.0.2.150', '/signup')).body.limit === 5, 'the hard policy to apply', 10_000, 50);
    const results = [];
    for (let i = 0; i < 10; i++) results.push(await check(s, '192.0.2.151', '/signup'));
    expect(
      results.map((r) => r.body.source),
      JSON.stringify(results.map((r) => r.body.reason)),
    ).toEqual([...Array(5).fill('none'), ...Array(5).fill('hard-limit')]);
    expect(results.at(-1)!.body).toMatchObject({ allowed: false, status: 429, source: 'hard-limit', policyId: 'signup-per-ip', remaining: 0 });
    expect(results.at(-1)!.headers.get('ratelimit-policy')).toBe('"signup-per-ip";q=5;w=60');
  });

  it('answers 400 naming the problem for a request it cannot read', async () => {
    const bad = await check(sidecars[0]!, 'not-an-ip');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'SUBJECT_INVALID_IP' });
    const res = await fetch(`${sidecars[0]!.url}/v1/check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ip: '192.0.2.1', method: 'GET', host: 'h', path: '/', extra: 1 }),
    });
    expect([res.status, res.headers.get('content-type')]).toEqual([400, 'application/problem+json; charset=utf-8']);
    expect(await res.json()).toMatchObject({ code: 'INVALID_REQUEST', errors: [{ path: 'extra', message: 'is not a known field' }] });
  });
});
