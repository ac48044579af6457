import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompressionTypes } from 'kafkajs';
import { eventPartitionKey } from '@banstream/core';
import { keyPartition, withDeadline } from '@banstream/platform';
import { SCHEMA_NAMES, type Ban, type WindowCount } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { catalog, decodeBan, decodeCount, event, publishEvents, publishPolicy, startAggregator, stopAggregators, TopicTail, type Aggregator } from './support/aggregator.js';

/** The planted record's network, and the flood's, on another events partition. */
const PLANTER = '198.51.100.7';
const FLOODER = '203.0.113.66';
/** Distinct users in the planted record: their repartition entries are megabytes, the record itself (gzip) under 1 MiB. */
const USERS = 120_000;

/**
 * Attack on issue 25's "no record stops a partition", found by the attack review:
 * one events record (gzip, as the events topic accepts) of 120,000 events with
 * distinct users makes stage one's repartition output for one owner partition
 * several MiB, one message the broker refuses for ever (MESSAGE_TOO_LARGE). The
 * publication is retried until done, and every partition's repartition waits behind
 * it (SerialPublications): no record of any partition is finished again, and a flood
 * on another partition is never banned. This must pass once the repartition goes
 * out in messages the broker takes (or what it can never take is dead-lettered).
 */
describe('attack: a repartition output the broker refuses', () => {
  const { kafkaBrokers } = testInfra();
  let broker: TestBroker | undefined;
  const running: Aggregator[] = [];

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
    const policies = broker.topics.name('policies');
    await publishPolicy(broker.producer, policies, { id: 'flood', key: ['ip'], threshold: { count: 50, interval: '1m' }, action: { type: 'ban', banDuration: '10m' } });
    await publishPolicy(broker.producer, policies, { id: 'per-user', key: ['user'], threshold: { count: 1_000_000, interval: '1h' }, action: { type: 'throttle' } });
  }, 60_000);

  afterAll(async () => {
    await stopAggregators(running, 20_000);
    await broker?.close();
  });

  it('keeps counting and banning after one events record whose repartition is over the broker limit', async () => {
    const { kafka, producer, topics } = broker!;
    const events = topics.name('events');
    expect(keyPartition(eventPartitionKey(PLANTER), 3)).not.toBe(keyPartition(eventPartitionKey(FLOODER), 3));
    const bans = await new TopicTail<Ban>(kafka, topics.name('bans'), decodeBan).start();
    const counts = await new TopicTail<WindowCount>(kafka, topics.name('counts'), decodeCount).start();
    const a = await startAggregator({
      ...broker!.env, AGGREGATOR_GROUP_ID: `${topics.prefix}aggregator`, AGGREGATOR_HOT_SHARE: '0', AGGREGATOR_TICK_MS: '20', AGGREGATOR_SESSION_TIMEOUT_MS: '6000',
    });
    running.push(a);
    try {
      const now = Date.now();
      const planted = catalog.codec(SCHEMA_NAMES.requestEventBatch).encode({
        events: Array.from({ length: USERS }, (_, i) => event(PLANTER, now, { eventId: '', userId: `user-${i}-`.padEnd(100, 'x') })),
      });
      expect(gzipSync(planted).length).toBeLessThan(1 << 20);
      await withDeadline(producer.send({ topic: events, acks: -1, compression: CompressionTypes.GZIP, messages: [{ key: eventPartitionKey(PLANTER), value: planted }] }), 30_000, 'planting');
      // The planted record is in hand, or done with, before the flood arrives.
      await waitUntil(async () => (await a.metric('banstream_aggregator_events_consumed_total')) >= USERS || a.proc.output().includes('publishing the repartition failed'), 'the planted record read', 60_000, 100);

      await publishEvents(producer, events, Array.from({ length: 120 }, (_, i) => event(FLOODER, Date.now() + i)), 20);
      const ban = await waitUntil(() => bans.latest().get(`ip:${FLOODER}`), () => `the flood banned\n${a.proc.output().slice(-3000)}`, 45_000, 100);
      expect(ban).toMatchObject({ policyId: 'flood', origin: 'aggregator' });
      await waitUntil(() => counts.latest().get(`flood|ip:${FLOODER}`)?.count === 120, 'the flood counted', 20_000);
    } finally {
      await bans.stop();
      await counts.stop();
    }
  }, 180_000);
});
