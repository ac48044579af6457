import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventPartitionKey, isBanstreamError } from '@banstream/core';
import { createEdgePublisher, type EdgePublisher } from '@banstream/edge';
import { createEnforcer, type Enforcer } from '@banstream/enforcer';
import type { Kafka, Producer } from '@banstream/kafka';
import { createMetricsRegistry, createRedis, type Redis } from '@banstream/platform';
import { encodeSingleObject, SCHEMA_NAMES, type Ban, type RequestEvent, type WindowCount } from '@banstream/schemas';
import { createHardLimiter } from '../services/enforcer/src/hard/index.js';
import { captureLogger, testInfra, uniqueName, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { produceOrFail } from './support/kafka.js';
import { exitWithin } from './support/processes.js';
import { catalog, decodeBan, decodeCount, event, publishEvents, publishPolicy, startAggregator, TopicTail, type Aggregator } from './support/aggregator.js';

/**
 * Request costs end to end, on the real Kafka and Redis: events that cost 5 from the
 * edge publisher, records of the writer before costs (cost 1), a policy's own cost per
 * method and path, all counted by the real aggregator and seen at an enforcer; and
 * hard limits in Redis that take a request's cost.
 */
describe('request costs through the edge, the aggregator, an enforcer and Redis', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  const keyPrefix = `${uniqueName('costs')}:`;
  let broker: TestBroker | undefined;
  let kafka: Kafka;
  let producer: Producer;
  let aggregator: Aggregator | undefined;
  let enforcer: Enforcer | undefined;
  let publisher: EdgePublisher | undefined;
  let redis: Redis | undefined;
  let bans: TopicTail<Ban> | undefined;
  let counts: TopicTail<WindowCount> | undefined;

  /** Bans at once over 50 in a minute, on `path`, keyed on the address; nothing denied before the ban. */
  const banPolicy = (id: string, match: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    id,
    mode: 'enforce',
    key: ['ip'],
    match,
    threshold: { count: 50, interval: '1m' },
    action: { type: 'ban', exceed: 'none', banDuration: '1h' },
    ...extra,
  });
  const hardPolicy = (id: string, path: string, extra: Record<string, unknown> = {}) => ({
    id,
    mode: 'enforce',
    key: ['ip'],
    match: { paths: [path] },
    threshold: { count: 10, interval: '1m' },
    action: { type: 'throttle' },
    enforcement: { type: 'hard', failureMode: 'closed' },
    ...extra,
  });
  const check = (ip: string, path: string, extra: { method?: string; cost?: number } = {}) => enforcer!.check({ ip, method: 'GET', host: 'shop.example', path, ...extra });
  const banOf = (subject: string) => bans!.records.find((r) => r.key === subject)?.value ?? undefined;
  const countOf = (key: string) => counts!.latest().get(key)?.count;

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    ({ kafka, producer } = broker);
    const { topics } = broker;
    await publishPolicy(producer, topics.name('policies'), banPolicy('cost-edge', { paths: ['/edge'] }));
    await publishPolicy(producer, topics.name('policies'), banPolicy('cost-old', { paths: ['/old'] }));
    await publishPolicy(
      producer,
      topics.name('policies'),
      banPolicy('cost-route', { pathPrefixes: ['/route/'] }, { threshold: { count: 30, interval: '1m' }, costs: [{ methods: ['POST'], paths: ['/route/login'], cost: 10 }] }),
    );
    await publishPolicy(producer, topics.name('policies'), hardPolicy('cost-hard', '/hard'));
    await publishPolicy(producer, topics.name('policies'), hardPolicy('cost-hard-route', '/hard-route', { costs: [{ methods: ['POST'], cost: 4 }] }));
    aggregator = await startAggregator({ ...broker.env, TOPIC_PARTITIONS: '3', AGGREGATOR_TICK_MS: '20', AGGREGATOR_COUNT_INTERVAL_MS: '10', AGGREGATOR_GROUP_ID: `${topics.prefix}aggregator` });
    redis = createRedis({ url: redisUrl, logger: captureLogger().logger });
    await redis.connect();
    const registry = createMetricsRegistry('request-costs-test', { defaultMetrics: false });
    const logger = captureLogger().logger;
    enforcer = createEnforcer({
      kafka,
      admin: broker.admin,
      topicPrefix: topics.prefix,
      logger,
      registry,
      instanceId: 'request-costs-test',
      hardLimiter: createHardLimiter({ redis, logger, registry, keyPrefix, timeoutMs: 1_000 }),
    });
    await enforcer.start();
    publisher = createEdgePublisher({ kafka, topic: topics.name('events'), logger, lingerMs: 1 });
    bans = await new TopicTail(kafka, topics.name('bans'), decodeBan).start();
    counts = await new TopicTail(kafka, topics.name('counts'), decodeCount).start();
  }, 120_000);

  afterAll(async () => {
    await publisher?.close(5_000);
    await enforcer?.stop();
    aggregator?.proc.child.kill('SIGTERM');
    if (aggregator) await exitWithin(aggregator.proc, 15_000);
    await bans?.stop();
    await counts?.stop();
    if (redis) {
      // Only our own keys: the Redis is shared, never flush it.
      const keys = await redis.keys(`${keyPrefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
    await broker?.close();
  });

  /** Publishes through the real edge publisher and waits until Kafka has every event. */
  async function fromEdge(events: RequestEvent[]): Promise<void> {
    const before = publisher!.stats().delivered;
    for (const e of events) publisher!.publish(e);
    await waitUntil(() => publisher!.stats().delivered >= before + events.length || undefined, 'the edge publisher to deliver', 20_000, 10);
  }

  it('(a) events that cost 5 from the edge ban a subject after 50 / 5 = 10 requests, not before: the aggregator sums costs, the enforcer applies the ban', async () => {
    const ip = '203.0.113.60';
    const now = Date.now();
    await fromEdge(Array.from({ length: 10 }, (_, i) => event(ip, now - 100 + i, { path: '/edge', cost: 5 })));
    // The sum (10 × 5 = 50) reaches the threshold without crossing it: counted, published, no ban.
    await waitUntil(
      () => countOf(`cost-edge|ip:${ip}`) === 50 || undefined,
      () => `the count 50 for ${ip} (last seen: ${countOf(`cost-edge|ip:${ip}`)})`,
      20_000,
    );
    expect(banOf(`ip:${ip}`)).toBeUndefined();
    expect((await check(ip, '/edge')).allowed).toBe(true);
    // The eleventh request crosses it: 55 > 50.
    await fromEdge([event(ip, now - 80, { path: '/edge', cost: 5 })]);
    const ban = await waitUntil(() => banOf(`ip:${ip}`), 'the ban after the eleventh request', 20_000);
    expect(ban).toMatchObject({ policyId: 'cost-edge', evidenceCount: 55, preview: false });
    const denied = await waitUntil(
      async () => {
        const d = await check(ip, '/anything');
        return d.allowed ? undefined : d;
      },
      'the ban at the enforcer',
      20_000,
      20,
    );
    expect(denied).toMatchObject({ source: 'ban', policyId: 'cost-edge' });
  });

  it('(b) a record of the writer before costs (no cost field) counts each of its events as 1', async () => {
    const ip = '203.0.113.61';
    const now = Date.now();
    const [v1, latest] = catalog.versions(SCHEMA_NAMES.requestEventBatch);
    expect(latest).toBeDefined();
    const old = (n: number, from: number) =>
      Array.from({ length: n }, (_, i) => {
        const e: Partial<RequestEvent> = event(ip, now - 200 + from + i, { path: '/old' });
        delete e.cost;
        return e;
      });
    const record = (events: Partial<RequestEvent>[]) => ({ key: eventPartitionKey(ip), value: encodeSingleObject(v1!.type, v1!.fingerprint, { events }, SCHEMA_NAMES.requestEventBatch) });
    const topic = broker!.topics.name('events');
    await produceOrFail(producer, topic, [record(old(50, 0))]);
    await waitUntil(
      () => countOf(`cost-old|ip:${ip}`) === 50 || undefined,
      () => `the count 50 for ${ip} (last seen: ${countOf(`cost-old|ip:${ip}`)})`,
      20_000,
    );
    expect(banOf(`ip:${ip}`)).toBeUndefined();
    await produceOrFail(producer, topic, [record(old(1, 50))]);
    expect(await waitUntil(() => banOf(`ip:${ip}`), 'the ban at the 51st event', 20_000)).toMatchObject({ policyId: 'cost-old', evidenceCount: 51 });
  });

  it('(c) a hard limit of 10 refuses the fourth request of cost 3 and still admits one of cost 1; a cost out of range is refused', async () => {
    const ip = '198.51.100.70';
    const decisions: Awaited<ReturnType<typeof check>>[] = [];
    for (let i = 0; i < 4; i++) decisions.push(await check(ip, '/hard', { cost: 3 }));
    expect(decisions.map((d) => [d.allowed, d.remaining ?? d.quota?.remaining])).toEqual([
      [true, 7],
      [true, 4],
      [true, 1],
      [false, 0],
    ]);
    expect(decisions[3]).toMatchObject({ source: 'hard-limit', policyId: 'cost-hard', status: 429 });
    expect((await check(ip, '/hard', { cost: 1 })).allowed).toBe(true);
    expect((await check(ip, '/hard', { cost: 1 })).allowed).toBe(false);
    for (const cost of [0, 1.5, 1_000_001]) {
      const refused = await check('198.51.100.71', '/hard', { cost }).then(
        () => 'allowed or denied',
        (error: unknown) => (isBanstreamError(error) ? error.code : String(error)),
      );
      expect(refused, String(cost)).toBe('COST_OUT_OF_RANGE');
    }
  });

  it('(d) a policy’s route cost applies where events are counted and where hard limits are checked, whatever the request’s own cost', async () => {
    const ip = '203.0.113.62';
    const now = Date.now();
    // POST /route/login costs 10 under cost-route, even sent with a cost of 2 by the edge: 3 × 10 = 30, the threshold.
    await publishEvents(
      producer,
      broker!.topics.name('events'),
      Array.from({ length: 3 }, (_, i) => event(ip, now - 100 + i, { method: 'POST', path: '/route/login', cost: 2 })),
    );
    await waitUntil(
      () => countOf(`cost-route|ip:${ip}`) === 30 || undefined,
      () => `the count 30 for ${ip} (last seen: ${countOf(`cost-route|ip:${ip}`)})`,
      20_000,
    );
    expect(banOf(`ip:${ip}`)).toBeUndefined();
    // A GET under the same policy counts its own cost, 1: 31 > 30.
    await publishEvents(producer, broker!.topics.name('events'), [event(ip, now - 90, { path: '/route/home' })]);
    expect(await waitUntil(() => banOf(`ip:${ip}`), 'the ban at 31', 20_000)).toMatchObject({ policyId: 'cost-route', evidenceCount: 31 });

    // The hard policy's POST costs 4: two fit in 10, the third does not; a GET (1) still does.
    const hard = '198.51.100.72';
    const posts: Awaited<ReturnType<typeof check>>[] = [];
    for (let i = 0; i < 3; i++) posts.push(await check(hard, '/hard-route', { method: 'POST' }));
    expect(posts.map((d) => [d.allowed, d.remaining ?? d.quota?.remaining])).toEqual([
      [true, 6],
      [true, 2],
      [false, 0],
    ]);
    expect((await check(hard, '/hard-route')).allowed).toBe(true);
  });
});
