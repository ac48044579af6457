import { afterAll, beforeAll, describe, it } from 'vitest';
import type { Admin, Kafka, Producer } from '@banstream/kafka';
import type { Ban, WindowCount } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { decodeBan, decodeCount, publishEvents, startAggregator, stopAggregators, TopicTail, type Aggregator } from './support/aggregator.js';
import { committedAll, expectExactResult, publishCountingPolicies, scaleOutEnv, traffic } from './support/aggregator-traffic.js';

/**
 * Two aggregators share a 12-partition events topic; one is killed with SIGKILL
 * mid-stream. Counts of every dimension, including those that are not the events'
 * partition key (user, country), must still equal an exact recount, and no subject
 * may get two different bans.
 */
describe('aggregator scale-out and recovery', () => {
  const { kafkaBrokers } = testInfra();
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  let topics: TestBroker['topics'];
  let broker: TestBroker | undefined;
  const running: Aggregator[] = [];

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 12);
    ({ kafka, admin, producer, topics } = broker);
    await publishCountingPolicies(producer, topics.name('policies'));
  }, 60_000);

  afterAll(async () => {
    await stopAggregators(running, 15_000);
    await broker?.close();
  });

  it('counts every dimension exactly and bans each attacker once, across a kill -9', async () => {
    const env = scaleOutEnv(kafkaBrokers, topics.prefix);
    const [a, b] = await Promise.all([startAggregator(env), startAggregator(env)]);
    running.push(a!, b!);
    const counts = await new TopicTail<WindowCount>(kafka, topics.name('counts'), decodeCount).start();
    const bans = await new TopicTail<Ban>(kafka, topics.name('bans'), decodeBan).start();
    try {
      const first = traffic(1, Date.now());
      await publishEvents(producer, topics.name('events'), first, 50);
      // Both instances have counted and committed the first half: what the killed one
      // knew must come back from a replay, not from re-reading uncommitted input.
      await waitUntil(async () => (await b!.metric('banstream_aggregator_events_consumed_total')) > 0, 'the second instance to count events', 30_000);
      await waitUntil(() => committedAll(admin, env.AGGREGATOR_GROUP_ID, topics.name('events')), 'the first half committed', 30_000);
      await waitUntil(() => committedAll(admin, `${env.AGGREGATOR_GROUP_ID}.subjects`, topics.name('aggregator-subjects')), 'its repartition committed', 30_000);
      b!.proc.child.kill('SIGKILL');
      await b!.proc.exited;
      const second = traffic(2, Date.now());
      await publishEvents(producer, topics.name('events'), second, 50);

      await expectExactResult(counts, bans, [...first, ...second]);
    } finally {
      await counts.stop();
      await bans.stop();
    }
  }, 180_000);
});
