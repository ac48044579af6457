import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactedFeed, whenGivenUp, type CompactedFeedOptions, type Consumer, type FeedRecord } from '@banstream/kafka';
import { createMetricsRegistry, type Logger } from '@banstream/platform';
import { captureLogger, testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { produceOrFail } from './support/kafka.js';
import { sumMetric } from './support/aggregator.js';

/**
 * kafkajs stops a consumer for good on an error it calls unrecoverable: a TypeError,
 * RangeError, ReferenceError or SyntaxError anywhere in its fetch loop, its own (its
 * metadata code throws a TypeError for a topic a broker lists without partitions) or
 * one in our batch handler. A feed that has caught up must not go quiet then: an
 * enforcer would keep answering from bans that no longer change. Here a dead-letter
 * sink with a bug throws a TypeError once, in the handler, on the real broker.
 */
describe('compacted feed: a consumer kafkajs gives up on', () => {
  const { kafkaBrokers } = testInfra();
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 1);
  }, 60_000);
  afterAll(async () => broker?.close());

  /** A feed on the test prefix's `name` topic, its own group and registry, counted as feed `name`. */
  function feedOn(name: 'bans' | 'allowlist' | 'alerts', options: Pick<CompactedFeedOptions, 'onRecord' | 'deadLetters'> & { logger?: Logger }) {
    const { kafka, admin, topics } = broker;
    const topic = topics.name(name);
    const registry = createMetricsRegistry(`feed-restart-${name}-test`, { defaultMetrics: false });
    const feed = new CompactedFeed({ kafka, admin, topic, groupId: `feed-restart-${name}-test.${topics.prefix}`, logger: options.logger ?? captureLogger().logger, feed: name, registry, ...options });
    const restarts = async () => sumMetric(await registry.metrics(), 'banstream_feed_restarts_total', `feed="${name}"`);
    return { feed, topic, registry, restarts };
  }

  it('is started again, counted and logged, and the records after the failure are applied', async () => {
    const { producer } = broker;
    const applied = new Map<string, string | null>();
    const log = captureLogger();
    let sinkCalls = 0;
    const { feed, topic, registry } = feedOn('bans', {
      logger: log.logger,
      onRecord: (r: FeedRecord) => {
        const value = r.value?.toString('utf8') ?? null;
        if (value === 'unreadable') throw new Error('not a ban');
        applied.set(r.key, value);
      },
      // The planted bug: the first call throws in the handler instead of returning a rejected promise.
      deadLetters: () => {
        sinkCalls++;
        if (sinkCalls === 1) throw new TypeError('planted: the dead-letter sink threw');
        return Promise.resolve();
      },
    });
    await produceOrFail(producer, topic, [{ key: 'ip:203.0.113.1', value: Buffer.from('first') }]);
    await feed.start();
    try {
      expect(applied.get('ip:203.0.113.1')).toBe('first');

      await produceOrFail(producer, topic, [{ key: 'ip:203.0.113.2', value: Buffer.from('unreadable') }]);
      await waitUntil(() => sinkCalls >= 1, 'the unreadable record handed to the sink', 15_000);
      // Down (an enforcer reports not ready) until the consumer has joined again.
      await waitUntil(() => feed.down, 'the feed to say it is down', 5_000, 10);
      await produceOrFail(producer, topic, [{ key: 'ip:203.0.113.3', value: Buffer.from('after the crash') }]);

      // Read again from the committed offset: the unreadable record (sink called once more) and the next.
      await waitUntil(() => applied.get('ip:203.0.113.3') === 'after the crash', 'the record after the crash applied', 30_000);
      expect(sinkCalls).toBe(2);
      expect(feed.down).toBe(false);
      expect(sumMetric(await registry.metrics(), 'banstream_feed_restarts_total', 'feed="bans"')).toBe(1);
      const restarts = log.lines().filter((l) => l.msg === 'feed consumer stopped on an error Kafka does not retry: restarting it');
      expect(restarts).toHaveLength(1);
      expect(restarts[0]).toMatchObject({ level: 50, feed: 'bans', topic, restartInMs: 1_000 }); // pino's error;

      // Caught up again: catchUp() answers for records written after the restart.
      await produceOrFail(producer, topic, [{ key: 'ip:203.0.113.4', value: null }]);
      await feed.catchUp();
      expect(applied.get('ip:203.0.113.4')).toBeNull();
    } finally {
      await feed.stop();
    }
  }, 60_000);

  it('whenGivenUp tells a TypeError in the batch handler (given up) from a plain error (kafkajs restarts)', async () => {
    const { kafka, producer, topics } = broker;
    const topic = topics.name('counts');
    const given: Error[] = [];
    const consumer = kafka.consumer({ groupId: `given-up-test.${topics.prefix}`, maxWaitTimeInMs: 100 });
    whenGivenUp(consumer, (error) => given.push(error));
    let batches = 0;
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    try {
      await consumer.run({
        eachBatch: async () => {
          batches++;
          // kafkajs retries the batch after a plain Error, within its fetch loop; it stops for good on the TypeError.
          if (batches === 1) throw new Error('planted: retried');
          throw new TypeError('planted: given up');
        },
      });
      await produceOrFail(producer, topic, [{ key: 'k', value: Buffer.from('v') }]);
      await waitUntil(() => given.length > 0, 'kafkajs to give up on the consumer', 30_000);
      expect(batches).toBe(2);
      expect(given).toHaveLength(1);
      expect((given[0]!.cause as Error).name).toBe('TypeError');
    } finally {
      await consumer.disconnect();
      await broker.admin.deleteGroups([`given-up-test.${topics.prefix}`]).catch(() => undefined);
    }
  }, 60_000);

  it('stopped while a restart waits, starts no consumer again', async () => {
    const { producer } = broker;
    const applied: string[] = [];
    const { feed, topic, restarts } = feedOn('allowlist', {
      onRecord: (r) => {
        if (r.value?.toString('utf8') === 'unreadable') throw new Error('not an entry');
        applied.push(r.key);
      },
      deadLetters: () => {
        throw new TypeError('planted: the dead-letter sink threw');
      },
    });
    await feed.start();
    await produceOrFail(producer, topic, [{ key: 'a', value: Buffer.from('unreadable') }]);
    await waitUntil(() => feed.down, 'the feed to be given up on', 15_000, 10);
    await feed.stop();
    await produceOrFail(producer, topic, [{ key: 'b', value: Buffer.from('after the stop') }]);
    // Past the 1 s the restart would have waited.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(applied).toEqual([]);
    expect(await restarts()).toBe(1);
  }, 60_000);

  it("commits what it applied, beside its fetch loop (background-commits.ts): the group's offset reaches the end", async () => {
    const { producer, admin } = broker;
    const applied: string[] = [];
    const { feed, topic } = feedOn('allowlist', { onRecord: (r) => applied.push(r.key) });
    const groupId = `feed-restart-allowlist-test.${broker.topics.prefix}`;
    await feed.start();
    try {
      // The topic holds the records of the test before too: the group reads it from the start.
      await produceOrFail(producer, topic, [{ key: 'commit-1', value: Buffer.from('1') }]);
      await produceOrFail(producer, topic, [{ key: 'commit-2', value: Buffer.from('2') }]);
      await feed.catchUp();
      expect(applied.slice(-2)).toEqual(['commit-1', 'commit-2']);
      const ends = await admin.fetchTopicOffsets(topic);
      await waitUntil(
        async () => {
          const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
          return ends.every((e) => committed!.partitions.find((o) => o.partition === e.partition)?.offset === e.high);
        },
        "the group's committed offsets at the topic's end",
        15_000,
      );
    } finally {
      await feed.stop();
    }
  }, 60_000);

  it('read again from its committed offset after a crash past its batch, applies none of that batch twice', async () => {
    const { producer } = broker;
    const appliedTimes = new Map<string, number>();
    // An appending reader, as the control plane's alert list is.
    const { feed, topic, restarts } = feedOn('alerts', { onRecord: (r) => appliedTimes.set(r.key, (appliedTimes.get(r.key) ?? 0) + 1) });
    // The planted failure: kafkajs itself throws a TypeError once a batch was handled, before it commits the batch.
    const consumer = (feed as unknown as { consumer: Consumer }).consumer;
    let planted = false;
    consumer.on(consumer.events.END_BATCH_PROCESS, () => {
      if (planted) return;
      planted = true;
      throw new TypeError('planted: after the batch, before its commit');
    });
    await feed.start();
    try {
      await produceOrFail(producer, topic, [{ key: 'alert-1', value: Buffer.from('first') }]);
      await waitUntil(async () => planted && (await restarts()) === 1 && !feed.down, 'the crash after the first batch, and the restart', 30_000);
      await produceOrFail(producer, topic, [{ key: 'alert-2', value: Buffer.from('second') }]);
      await feed.catchUp();
      // Without the skip, 'alert-1' (read again from the offset committed before the crash) was applied twice.
      expect(Object.fromEntries(appliedTimes)).toEqual({ 'alert-1': 1, 'alert-2': 1 });
    } finally {
      await feed.stop();
    }
  }, 60_000);
});
