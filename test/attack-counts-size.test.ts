import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ban } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { decodeBan, event, publishEvents, publishPolicy, startAggregator, stopAggregators, TopicTail, type Aggregator } from './support/aggregator.js';

const FLOODER = '203.0.113.66';
/** Distinct users, each seen once: every one a hot count (threshold 2, AGGREGATOR_HOT_SHARE 0.5). */
const USERS = 100_000;

/**
 * Attack on issue 25's "no record stops a partition", found by the attack review: the
 * counts and bans of a tick go out in one sendBatch, whatever their size. Events of
 * many distinct users, sent in ordinary records of 500 as the ingest gateway writes
 * them, make one tick's counts for one counts partition larger than the broker takes
 * (MESSAGE_TOO_LARGE): the DecisionFlusher retries that publication for ever, every
 * later one (bans included) waits behind it, and the stages wait on it too. This must
 * pass once decisions go out in sends the broker takes.
 */
describe('attack: one tick of counts the broker refuses', () => {
  const { kafkaBrokers } = testInfra();
  let broker: TestBroker | undefined;
  const running: Aggregator[] = [];

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    const policies = broker.topics.name('policies');
    await publishPolicy(broker.producer, policies, { id: 'flood', key: ['ip'], threshold: { count: 50, interval: '1m' }, action: { type: 'ban', banDuration: '10m' } });
    await publishPolicy(broker.producer, policies, { id: 'per-user', key: ['user'], threshold: { count: 2, interval: '1h' }, action: { type: 'throttle' } });
  }, 60_000);

  afterAll(async () => {
    await stopAggregators(running, 20_000);
    await broker?.close();
  });

  it('keeps banning after a burst of distinct users sent as the gateway sends events', async () => {
    const { kafka, producer, topics } = broker!;
    const events = topics.name('events');
    const bans = await new TopicTail<Ban>(kafka, topics.name('bans'), decodeBan).start();
    const a = await startAggregator({ ...broker!.env, AGGREGATOR_GROUP_ID: `${topics.prefix}aggregator` });
    running.push(a);
    try {
      const now = Date.now();
      // Spread over 100 client networks, so over every events partition.
      const burst = Array.from({ length: USERS }, (_, i) => event(`198.51.${i % 100}.7`, now, { userId: `user-${i}-`.padEnd(120, 'x') }));
      // Records of 500 events, as the gateway's publisher writes them, a few per send (each send's batch under 1 MiB).
      for (let i = 0; i < burst.length; i += 2_000) await publishEvents(producer, events, burst.slice(i, i + 2_000), 500);
      await waitUntil(async () => (await a.metric('banstream_aggregator_subject_entries_applied_total')) >= USERS || a.proc.output().includes('publishing counts and bans failed'), 'the burst counted', 60_000, 100);
      await publishEvents(producer, events, Array.from({ length: 120 }, (_, i) => event(FLOODER, Date.now() + i)), 20);
      const ban = await waitUntil(() => bans.latest().get(`ip:${FLOODER}`), () => `the flood banned\n${a.proc.output().slice(-3000)}`, 45_000, 100);
      expect(ban).toMatchObject({ policyId: 'flood', origin: 'aggregator' });
    } finally {
      await bans.stop();
    }
  }, 240_000);
});
