import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kafka, Producer } from '@banstream/kafka';
import { createEnforcer, type Enforcer } from '@banstream/enforcer';
import { createMetricsRegistry } from '@banstream/platform';
import type { Ban } from '@banstream/schemas';
import { captureLogger, testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { exitWithin } from './support/processes.js';
import { decodeBan, event, publishEvents, publishPolicy, startAggregator, TopicTail, type Aggregator } from './support/aggregator.js';

/**
 * Cloud Armor's rate_based_ban, end to end through the real aggregator and an
 * enforcer: over `threshold` the policy's exceed action applies from the shared
 * count (no ban yet), over `banThreshold` the subject is banned; preview marks both.
 */
describe('ban policy: the exceed action between threshold and ban', () => {
  const { kafkaBrokers } = testInfra();
  let broker: TestBroker | undefined;
  let kafka: Kafka;
  let producer: Producer;
  let aggregator: Aggregator | undefined;
  let enforcer: Enforcer | undefined;
  let bans: TopicTail<Ban> | undefined;

  const policy = (id: string, exceed: string, mode: 'enforce' | 'preview') => ({
    id,
    mode,
    key: ['ip'],
    match: { paths: [`/${id}`] },
    threshold: { count: 20, interval: '1m' },
    action: { type: 'ban', exceed, status: 429, banThreshold: { count: 200, interval: '1m' }, banDuration: '1h' },
  });
  const flood = (ip: string, path: string, n: number) => Array.from({ length: n }, (_, i) => event(ip, Date.now() - n + i, { path }));
  const check = (ip: string, path: string) => enforcer!.check({ ip, method: 'GET', host: 'shop.example', path });

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    ({ kafka, producer } = broker);
    const topics = broker.topics;
    await publishPolicy(producer, topics.name('policies'), policy('login', 'all', 'enforce'));
    await publishPolicy(producer, topics.name('policies'), policy('search', 'all', 'preview'));
    aggregator = await startAggregator({ ...broker.env, TOPIC_PARTITIONS: '3', AGGREGATOR_TICK_MS: '20', AGGREGATOR_GROUP_ID: `${topics.prefix}aggregator` });
    enforcer = createEnforcer({
      kafka,
      admin: broker.admin,
      topicPrefix: topics.prefix,
      logger: captureLogger().logger,
      registry: createMetricsRegistry('ban-exceed-test', { defaultMetrics: false }),
      instanceId: 'ban-exceed-test',
    });
    await enforcer.start();
    bans = await new TopicTail(kafka, topics.name('bans'), decodeBan).start();
  }, 120_000);

  afterAll(async () => {
    await enforcer?.stop();
    aggregator?.proc.child.kill('SIGTERM');
    if (aggregator) await exitWithin(aggregator.proc, 15_000);
    await bans?.stop();
    await broker?.close();
  });

  it('denies every request of a subject over the threshold before any ban, then bans it over the ban threshold', async () => {
    const events = broker!.topics.name('events');
    expect((await check('203.0.113.40', '/login')).allowed).toBe(true);
    // 60 in a minute: three times the threshold, under the ban threshold.
    await publishEvents(producer, events, flood('203.0.113.40', '/login', 60));
    const exceeded = await waitUntil(
      async () => {
        const d = await check('203.0.113.40', '/login');
        return d.allowed ? undefined : d;
      },
      'the exceed action at the enforcer',
      20_000,
      20,
    );
    expect(exceeded).toMatchObject({ allowed: false, status: 429, source: 'throttle', policyId: 'login' });
    expect(bans!.records.filter((r) => r.key === 'ip:203.0.113.40')).toEqual([]);
    // Another address, and another path of the same address, are not touched.
    expect((await check('203.0.113.41', '/login')).allowed).toBe(true);
    expect((await check('203.0.113.40', '/elsewhere')).allowed).toBe(true);

    await publishEvents(producer, events, flood('203.0.113.40', '/login', 200));
    const ban = await waitUntil(() => bans!.records.find((r) => r.key === 'ip:203.0.113.40')?.value ?? undefined, 'the ban over the ban threshold', 20_000);
    expect(ban).toMatchObject({ subject: 'ip:203.0.113.40', policyId: 'login', preview: false, httpStatus: 429 });
    await waitUntil(async () => (await check('203.0.113.40', '/elsewhere')).source === 'ban', 'the ban at the enforcer', 20_000, 20);
  });

  it('in preview, marks the exceed denial and the ban, and denies nothing', async () => {
    const events = broker!.topics.name('events');
    await publishEvents(producer, events, flood('203.0.113.50', '/search', 60));
    const marked = await waitUntil(
      async () => {
        const d = await check('203.0.113.50', '/search');
        return d.previewDenies.some((c) => c.policyId === 'search' && c.source === 'throttle') ? d : undefined;
      },
      'a preview exceed denial',
      20_000,
      20,
    );
    expect(marked.allowed).toBe(true);
    await publishEvents(producer, events, flood('203.0.113.50', '/search', 200));
    const ban = await waitUntil(() => bans!.records.find((r) => r.key === 'ip:203.0.113.50')?.value ?? undefined, 'the preview ban', 20_000);
    expect(ban).toMatchObject({ policyId: 'search', preview: true });
    expect((await check('203.0.113.50', '/search')).allowed).toBe(true);
  });
});
