import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactedFeed, CompressionTypes } from '@banstream/kafka';
import type { DlqRecord } from '@banstream/schemas';
import { captureLogger, testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { sendSnappy } from './support/snappy.js';
import { createTopicsLed } from './support/kafka.js';

/**
 * kafkajs 2.2.4 reads no Snappy, LZ4 or ZSTD batch: it throws KafkaJSNotImplemented and
 * gives up on the consumer for good. Every topic is kept `compression.type=uncompressed`
 * (packages/kafka topics.ts), so the broker stores such a batch uncompressed and every
 * reader reads it (without that setting the feed below never starts), and a batch that
 * would be over the broker's size limit uncompressed is refused at the door instead of
 * being decompressed by every reader.
 */
describe('a batch compressed with a codec kafkajs cannot read', () => {
  const { kafkaBrokers } = testInfra();
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 1);
  }, 60_000);
  afterAll(async () => broker?.close());

  it('is stored uncompressed by the broker, so a compacted feed reads it and the records after it', async () => {
    const { kafka, admin, producer, topics } = broker;
    const topic = topics.name('bans');
    await sendSnappy(producer, topic, [{ key: 'ip:203.0.113.10', value: Buffer.from('written as Snappy') }]);
    await producer.send({ topic, acks: -1, messages: [{ key: 'ip:203.0.113.11', value: Buffer.from('written plain') }] });

    const applied = new Map<string, string>();
    const feed = new CompactedFeed({
      kafka,
      admin,
      topic,
      groupId: `compressed-batches-test.${topics.prefix}`,
      logger: captureLogger().logger,
      onRecord: (r) => applied.set(r.key, r.value?.toString('utf8') ?? ''),
    });
    try {
      await feed.start();
      expect(Object.fromEntries(applied)).toEqual({ 'ip:203.0.113.10': 'written as Snappy', 'ip:203.0.113.11': 'written plain' });
    } finally {
      await feed.stop();
    }
  }, 60_000);

  it("on a topic that keeps the producer's compression (not made by banstream), is skipped as one record, dead-lettered, and the records after it applied", async () => {
    const { kafka, admin, producer, topics } = broker;
    const topic = `${topics.prefix}foreign-bans`;
    await createTopicsLed(admin, [{ topic, numPartitions: 1, configEntries: [{ name: 'compression.type', value: 'producer' }] }]);
    await sendSnappy(producer, topic, [{ key: 'ip:203.0.113.20', value: Buffer.from('written as Snappy') }]);
    await producer.send({ topic, acks: -1, messages: [{ key: 'ip:203.0.113.21', value: Buffer.from('written plain') }] });

    const applied = new Map<string, string>();
    const dead: DlqRecord[] = [];
    const feed = new CompactedFeed({
      kafka,
      admin,
      topic,
      groupId: `compressed-batches-test.foreign.${topics.prefix}`,
      logger: captureLogger().logger,
      deadLetters: async (records) => void dead.push(...records),
      onRecord: (r) => applied.set(r.key, r.value?.toString('utf8') ?? ''),
    });
    try {
      // Before the stand-in reader, kafkajs gave up on the consumer here: start() failed with KafkaJSNotImplemented.
      await feed.start();
      expect(Object.fromEntries(applied)).toEqual({ 'ip:203.0.113.21': 'written plain' });
      await waitUntil(() => dead.length === 1, 'the Snappy batch dead-lettered', 10_000);
      expect(dead[0]).toMatchObject({
        originalTopic: topic,
        offset: 0,
        reasonCode: 'KAFKA_BATCH_UNREADABLE',
        reasonMessage: 'record batch at offset 0 skipped unread: KafkaJSNotImplemented: Snappy compression not implemented',
      });
    } finally {
      await feed.stop();
    }
  }, 60_000);

  it('is refused whole when it would be larger than the broker takes uncompressed (a gzip bomb)', async () => {
    const { producer, topics } = broker;
    const topic = topics.name('policies');
    // 16 MiB of zeros is about 16 KiB of gzip: under the broker's 1 MiB limit as written,
    // far over it once decompressed, which is what kafkajs would have to hold.
    const bomb = Buffer.alloc(16 << 20);
    await expect(producer.send({ topic, acks: -1, compression: CompressionTypes.GZIP, messages: [{ key: 'policy-bomb', value: bomb }] })).rejects.toThrow(/larger than the max message size/i);
    const [end] = await broker.admin.fetchTopicOffsets(topic);
    expect(end!.high).toBe('0');
  }, 60_000);
});
