import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { CompressionTypes } from '@banstream/kafka';
import { eventPartitionKey, keyPartition } from '@banstream/core';
import { withDeadline } from '@banstream/platform';
import { SCHEMA_NAMES, type WindowCount } from '@banstream/schemas';
import { waitUntil } from './support/infra.js';
import { catalog, decodeCount, event, TopicTail } from './support/aggregator.js';
import { FLOODER, floodSuite } from './support/flood-suite.js';

/** The planted record's network, and the flood's, on another events partition. */
const PLANTER = '198.51.100.7';
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
  const suite = floodSuite([{ id: 'per-user', key: ['user'], threshold: { count: 1_000_000, interval: '1h' }, action: { type: 'throttle' } }]);

  it('keeps counting and banning after one events record whose repartition is over the broker limit', async () => {
    const { kafka, producer, topics } = suite.broker;
    expect(keyPartition(eventPartitionKey(PLANTER), 3)).not.toBe(keyPartition(eventPartitionKey(FLOODER), 3));
    const counts = await new TopicTail<WindowCount>(kafka, topics.name('counts'), decodeCount).start();
    const a = await suite.aggregator({ AGGREGATOR_HOT_SHARE: '0', AGGREGATOR_TICK_MS: '20', AGGREGATOR_SESSION_TIMEOUT_MS: '6000' });
    try {
      const now = Date.now();
      const planted = catalog.codec(SCHEMA_NAMES.requestEventBatch).encode({
        events: Array.from({ length: USERS }, (_, i) => event(PLANTER, now, { eventId: '', userId: `user-${i}-`.padEnd(100, 'x') })),
      });
      expect(gzipSync(planted).length).toBeLessThan(1 << 20);
      await withDeadline(
        producer.send({ topic: topics.name('events'), acks: -1, compression: CompressionTypes.GZIP, messages: [{ key: eventPartitionKey(PLANTER), value: planted }] }),
        30_000,
        'planting',
      );
      // The planted record is in hand, or done with, before the flood arrives.
      await waitUntil(
        async () => (await a.metric('banstream_aggregator_events_consumed_total')) >= USERS || a.proc.output().includes('publishing the repartition failed'),
        'the planted record read',
        60_000,
        100,
      );

      expect(await suite.floodUntilBanned(a, 45_000)).toMatchObject({ policyId: 'flood', origin: 'aggregator' });
      await waitUntil(() => counts.latest().get(`flood|ip:${FLOODER}`)?.count === 120, 'the flood counted', 20_000);
    } finally {
      await counts.stop();
    }
  }, 180_000);
});
