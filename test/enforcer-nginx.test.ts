import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import type { Producer } from '@banstream/kafka';
import { SCHEMA_NAMES } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { encodeBan, manualBan } from './support/bans.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { produceOrFail } from './support/kafka.js';
import { startNginxSidecar, type NginxSidecar } from './support/nginx.js';
import { catalog, publishPolicy } from './support/aggregator.js';

/** Users of the example's /account/ location (auth_basic). */
const PASSWORDS = { alice: 'alice-secret', carol: 'carol-secret' };

/** An htpasswd entry nginx reads without a crypt(3) of its own: {SSHA}, base64 of SHA-1(password + salt) + salt. */
function ssha(password: string): string {
  const salt = randomBytes(8);
  return `{SSHA}${Buffer.concat([createHash('sha1').update(password).update(salt).digest(), salt]).toString('base64')}`;
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Every header a client might send to choose its identity, for one user id and API key. */
const claiming = (user: string, apiKey: string) => ({ 'x-user-id': user, 'x-api-key': apiKey, 'x-banstream-user': user, 'x-banstream-api-key': apiKey });

/** A real nginx (Debian's) in front of an app, asking the enforcer sidecar through auth_request. */
describe('enforcer behind nginx auth_request', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  let producer: Producer;
  let topics: TestBroker['topics'];
  let broker: TestBroker | undefined;
  let nginx: NginxSidecar | undefined;
  let site = '';

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    ({ producer, topics } = broker);
    await publishPolicy(producer, topics.name('policies'), { id: 'api-per-ip', key: ['ip'], threshold: { count: 10, interval: '1m' }, action: { type: 'throttle', status: 429 } });
    nginx = await startNginxSidecar({
      enforcerEnv: { KAFKA_BROKERS: kafkaBrokers, REDIS_URL: redisUrl, TOPIC_PREFIX: topics.prefix, TOPIC_PARTITIONS: '3' },
      app: (_req, res) => res.end('hello from the app'),
      htpasswd: Object.entries(PASSWORDS)
        .map(([user, password]) => `${user}:${ssha(password)}\n`)
        .join(''),
    });
    site = nginx.site;
  }, 120_000);

  afterAll(async () => {
    await nginx?.stop();
    await broker?.close();
  });

  /** A ban for two minutes: Retry-After is checked below. */
  const banOf = (subject: string) => encodeBan(manualBan(subject, { banId: `nginx-${subject}`, expiresAt: Date.now() + 120_000 }));

  it('lets a clean client through (the sidecar answers 204)', async () => {
    const res = await fetch(`${site}/products`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello from the app');
  });

  it('answers 403 with Retry-After for a banned client', async () => {
    await produceOrFail(producer, topics.name('bans'), [{ key: 'ip:127.0.0.1', value: banOf('ip:127.0.0.1') }]);
    const res = await waitUntil(
      async () => {
        const r = await fetch(`${site}/products`);
        return r.status === 403 ? r : undefined;
      },
      'nginx to refuse the banned client',
      10_000,
      20,
    );
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(100);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    await produceOrFail(producer, topics.name('bans'), [{ key: 'ip:127.0.0.1', value: null as unknown as Buffer }]);
    await waitUntil(async () => (await fetch(`${site}/products`)).status === 200, 'the ban lifted', 10_000, 20);
  });

  const encodeAllow = (entry: string) => catalog.codec(SCHEMA_NAMES.allowEntry).encode({ entry, reason: 'test', addedBy: 'tests', addedAt: Date.now(), expiresAt: null });
  const apiKeySubject = (key: string) => `apikey:${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;

  it("never lets a client's own identity headers reach the decision: a banned address claiming an allowlisted user is refused", async () => {
    await produceOrFail(producer, topics.name('allowlist'), [
      { key: 'user:vip', value: encodeAllow('user:vip') },
      { key: apiKeySubject('vip-key'), value: encodeAllow(apiKeySubject('vip-key')) },
    ]);
    await produceOrFail(producer, topics.name('bans'), [{ key: 'ip:127.0.0.1', value: banOf('ip:127.0.0.1') }]);
    await waitUntil(async () => (await fetch(`${site}/products`)).status === 403, 'the address ban', 10_000, 20);
    for (const path of ['/products', '/account/x']) {
      const res = await fetch(`${site}${path}`, { headers: { ...claiming('vip', 'vip-key'), authorization: basic('carol', PASSWORDS.carol) } });
      expect(res.status, path).toBe(403);
    }
    await produceOrFail(producer, topics.name('bans'), [{ key: 'ip:127.0.0.1', value: null as unknown as Buffer }]);
    await waitUntil(async () => (await fetch(`${site}/products`)).status === 200, 'the ban lifted', 10_000, 20);
  });

  it('refuses an authenticated user who is banned, and nobody else for claiming that user', async () => {
    await produceOrFail(producer, topics.name('bans'), [
      { key: 'user:alice', value: banOf('user:alice') },
      { key: apiKeySubject('banned-key'), value: banOf(apiKeySubject('banned-key')) },
    ]);
    await waitUntil(async () => (await fetch(`${site}/account/x`, { headers: { authorization: basic('alice', PASSWORDS.alice) } })).status === 403, 'the user ban', 10_000, 20);
    // Another user, or nobody, claiming alice and a banned key: not refused for them.
    expect((await fetch(`${site}/account/x`, { headers: { ...claiming('alice', 'banned-key'), authorization: basic('carol', PASSWORDS.carol) } })).status).toBe(200);
    expect((await fetch(`${site}/products`, { headers: claiming('alice', 'banned-key') })).status).toBe(200);
    // Where auth_basic checks nothing, a Basic header naming alice is only a claim.
    expect((await fetch(`${site}/products`, { headers: { authorization: basic('alice', 'wrong') } })).status).toBe(200);
    // A wrong password is refused by nginx before the sidecar is asked.
    expect((await fetch(`${site}/account/x`, { headers: { authorization: basic('alice', 'wrong') } })).status).toBe(401);
    await produceOrFail(producer, topics.name('bans'), [{ key: 'user:alice', value: null as unknown as Buffer }]);
    await waitUntil(async () => (await fetch(`${site}/account/x`, { headers: { authorization: basic('alice', PASSWORDS.alice) } })).status === 200, 'the user ban lifted', 10_000, 20);
  });

  it('answers 429 with RateLimit headers for a throttled client', async () => {
    const count = catalog
      .codec(SCHEMA_NAMES.windowCount)
      .encode({ policyId: 'api-per-ip', subject: 'ip:127.0.0.1', kind: 'subject', count: 1_000_000, windowSeconds: 60, threshold: 10, observedAt: Date.now(), final: false });
    await produceOrFail(producer, topics.name('counts'), [{ key: 'api-per-ip|ip:127.0.0.1', value: count }]);
    const res = await waitUntil(
      async () => {
        const r = await fetch(`${site}/products`);
        return r.status === 429 ? r : undefined;
      },
      'nginx to throttle the client',
      10_000,
      20,
    );
    expect(res.headers.get('ratelimit-policy')).toBe('"api-per-ip";q=10;w=60');
    expect(res.headers.get('ratelimit')).toMatch(/^"api-per-ip";r=0;t=\d+$/);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
