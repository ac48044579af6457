import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Admin, Kafka, Producer } from '@banstream/kafka';
import { createEdgePublisher, type EdgePublisher } from '@banstream/edge';
import { banstreamPlugin, createEnforcer, type Enforcer } from '@banstream/enforcer';
import { createMetricsRegistry } from '@banstream/platform';
import { SCHEMA_NAMES, type RequestEvent } from '@banstream/schemas';
import { captureLogger, testInfra, waitUntil } from './support/infra.js';
import { encodeBan, manualBan } from './support/bans.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { produceOrFail } from './support/kafka.js';
import { catalog, publishPolicy, TopicTail } from './support/aggregator.js';

/** An edge service with the Fastify plugin: checks before handlers, events after responses. */
describe('enforcer Fastify plugin', () => {
  const { kafkaBrokers } = testInfra();
  const { logger } = captureLogger();
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  let topics: TestBroker['topics'];
  let broker: TestBroker | undefined;
  let enforcer: Enforcer;
  let publisher: EdgePublisher;
  let app: FastifyInstance;
  let events: TopicTail<{ events: RequestEvent[] }>;

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    ({ kafka, admin, producer, topics } = broker);
    await publishPolicy(producer, topics.name('policies'), {
      id: 'api',
      key: ['ip'],
      match: { pathPrefixes: ['/api/'] },
      threshold: { count: 50, interval: '1m' },
      action: { type: 'throttle', status: 429 },
    });
    enforcer = createEnforcer({ kafka, admin, topicPrefix: topics.prefix, logger, registry: createMetricsRegistry('test', { defaultMetrics: false }), instanceId: 'plugin-test' });
    await enforcer.start();
    publisher = createEdgePublisher({ kafka, topic: topics.name('events'), logger, lingerMs: 1 });
    app = Fastify();
    await app.register(banstreamPlugin, { enforcer, publisher, edgeId: 'edge-test', eventHeaders: ['user-agent'] });
    app.get('/api/items', async () => ({ items: [] }));
    app.get('/hello', async () => 'hi');
    await app.ready();
    events = await new TopicTail(kafka, topics.name('events'), (b) => catalog.codec(SCHEMA_NAMES.requestEventBatch).decode(b)).start();
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await publisher?.close(5_000);
    await events?.stop();
    await enforcer?.stop();
    await broker?.close();
  });

  const request = (path: string, ip: string) => app.inject({ method: 'GET', url: path, remoteAddress: ip, headers: { 'user-agent': 'curl/8' } });

  it('lets clean requests through with their quota headers and publishes their events with the status', async () => {
    const res = await request('/api/items', '203.0.113.70');
    expect(res.statusCode).toBe(200);
    expect(res.headers['ratelimit-policy']).toBe('"api";q=50;w=60');
    const event = await waitUntil(() => events.records.flatMap((r) => r.value?.events ?? []).find((e) => e.ip === '203.0.113.70'), 'the event on the events topic', 10_000);
    expect(event).toMatchObject({ method: 'GET', path: '/api/items', route: '/api/items', status: 200, edgeId: 'edge-test', headers: { 'user-agent': 'curl/8' } });
    expect(events.records.find((r) => r.value?.events.some((e) => e.ip === '203.0.113.70'))?.key).toBe('203.0.113.0/24');
  });

  it('answers a banned client itself, before the handler, and still publishes the 403', async () => {
    const ban = encodeBan(manualBan('ip:203.0.113.71', { expiresAt: Date.now() + 60_000 }));
    await produceOrFail(producer, topics.name('bans'), [{ key: 'ip:203.0.113.71', value: ban }]);
    const res = await waitUntil(
      async () => {
        const r = await request('/hello', '203.0.113.71');
        return r.statusCode === 403 ? r : undefined;
      },
      'the ban to apply',
      10_000,
      20,
    );
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ status: 403, title: 'Request blocked' });
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(55);
    await waitUntil(() => events.records.flatMap((r) => r.value?.events ?? []).some((e) => e.ip === '203.0.113.71' && e.status === 403), 'the 403 event', 10_000);
  });

  it('publishes the cost it checked, computed once before the body is read (a cost from the body would count 1 at the check and 50 at the aggregator)', async () => {
    const bulk = Fastify();
    await bulk.register(banstreamPlugin, { enforcer, publisher, edgeId: 'edge-test', cost: (r) => ((r.body as { items?: unknown[] } | undefined)?.items ? 50 : 2) });
    bulk.post('/bulk', async () => 'ok');
    await bulk.ready();
    try {
      const res = await bulk.inject({ method: 'POST', url: '/bulk', remoteAddress: '203.0.113.72', payload: { items: new Array(50).fill(1) } });
      expect(res.statusCode).toBe(200);
      const event = await waitUntil(() => events.records.flatMap((r) => r.value?.events ?? []).find((e) => e.ip === '203.0.113.72'), 'the bulk event', 10_000);
      expect(event.cost).toBe(2);
    } finally {
      await bulk.close();
    }
  });
});
