import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { createEdgePublisher, type EdgePublisher } from '@banstream/edge';
import { banstreamPlugin, type Decision, type Enforcer } from '@banstream/enforcer';
import type { Ban } from '@banstream/schemas';
import { captureLogger, testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { decodeBan, publishPolicy, startAggregator, stopAggregators, TopicTail, type Aggregator } from './support/aggregator.js';

const GRACE_MS = 1_000;
/** Each attacking request sends its body this long after its headers: past the grace period. */
const SLOW_MS = 2_500;
const ATTACKER = '203.0.113.66';
/** Any other client whose events share the attacker's events partition (here its /24). */
const NEIGHBOUR = '203.0.113.10';
/** The same guesses at full speed, on the same partition: banned, the pipeline works. */
const FAST_ATTACKER = '203.0.113.77';

/** A request body that arrives `ms` after the request starts, as a client dribbling it would send it. */
function slowBody(ms: number): Readable {
  const body = new Readable({ read() {} });
  setTimeout(() => {
    body.push('user=alice&password=guess');
    body.push(null);
  }, ms);
  return body;
}

/**
 * Attack on issue 25's event time ("can you dodge a ban by dating events in the
 * past?"), found by the attack review: the Fastify plugin dates each event at the
 * start of its request (Date.now() - elapsedTime), and the aggregator drops an event
 * dated more than the grace period behind its partition's clock as late. A client
 * makes its own requests late by taking longer than the grace period over each one
 * (here by sending the body slowly; a slow read of the response does the same), while
 * any other traffic on its partition moves the clock: none of its requests is ever
 * counted, and it is never banned, however many it sends. With the default grace (5 s)
 * that is 6-second requests, run concurrently.
 */
describe('attack: requests slower than the grace period are never counted', () => {
  const { kafkaBrokers } = testInfra();
  const { logger } = captureLogger();
  let broker: TestBroker | undefined;
  let publisher: EdgePublisher;
  let app: FastifyInstance;
  const running: Aggregator[] = [];

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    await publishPolicy(broker.producer, broker.topics.name('policies'), { id: 'login-flood', key: ['ip'], threshold: { count: 50, interval: '1m' }, action: { type: 'ban', banDuration: '10m' } });
    publisher = createEdgePublisher({ kafka: broker.kafka, topic: broker.topics.name('events'), logger, lingerMs: 1 });
    const allowAll = { check: async () => ({ allowed: true, status: 200, source: 'none', reason: 'no rule applies', previewDenies: [] }) as unknown as Decision } as unknown as Enforcer;
    app = Fastify();
    // Behind a load balancer the edge reads the client from its header; here the test names it.
    await app.register(banstreamPlugin, { enforcer: allowAll, publisher, edgeId: 'slow-edge', clientIp: (r) => String(r.headers['x-client']) });
    app.post('/login', async () => 'wrong password');
    app.get('/', async () => 'home');
    await app.ready();
  }, 60_000);

  afterAll(async () => {
    await stopAggregators(running, 20_000);
    await app?.close();
    await publisher?.close(5_000);
    await broker?.close();
  });

  it('bans a client whose requests each take longer than the grace period', async () => {
    const { kafka, topics } = broker!;
    const bans = await new TopicTail<Ban>(kafka, topics.name('bans'), decodeBan).start();
    const a = await startAggregator({ ...broker!.env, AGGREGATOR_GROUP_ID: `${topics.prefix}aggregator`, AGGREGATOR_GRACE_MS: String(GRACE_MS), AGGREGATOR_TICK_MS: '20' });
    running.push(a);
    try {
      // The neighbour's ordinary traffic, throughout.
      let browsing = true;
      const neighbour = (async () => {
        while (browsing) {
          await app.inject({ method: 'GET', url: '/', headers: { 'x-client': NEIGHBOUR } });
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      const attempts = Array.from({ length: 120 }, () =>
        app.inject({
          method: 'POST',
          url: '/login',
          headers: { 'x-client': ATTACKER, 'content-type': 'text/plain' },
          payload: slowBody(SLOW_MS),
        }),
      );
      const fast = Array.from({ length: 120 }, () => app.inject({ method: 'POST', url: '/login', headers: { 'x-client': FAST_ATTACKER, 'content-type': 'text/plain' }, payload: 'user=bob' }));
      const answers = await Promise.all([...attempts, ...fast]);
      expect(answers.every((r) => r.body === 'wrong password')).toBe(true);
      await new Promise((r) => setTimeout(r, 500));
      browsing = false;
      await neighbour;
      await waitUntil(() => bans.latest().get(`ip:${FAST_ATTACKER}`), 'the fast guesses banned', 20_000, 100);
      const ban = await waitUntil(() => bans.latest().get(`ip:${ATTACKER}`), 'the slow guesses banned', 10_000, 100).catch(async (error: Error) => {
        throw new Error(`${error.message} (events dropped as late: ${await a.metric('banstream_aggregator_late_events_total')})`);
      });
      expect(ban).toMatchObject({ policyId: 'login-flood' });
    } finally {
      await bans.stop();
    }
  }, 120_000);
});
