import { describe, expect, it } from 'vitest';
import { CompressionTypes, MAX_DECOMPRESSED_BATCH_BYTES } from '@banstream/kafka';
import { eventPartitionKey } from '@banstream/core';
import { SCHEMA_NAMES, type DlqRecord } from '@banstream/schemas';
import { waitUntil } from './support/infra.js';
import { catalog, event, TopicTail } from './support/aggregator.js';
import { FLOODER, floodSuite } from './support/flood-suite.js';
import { sendSnappy } from './support/snappy.js';

/**
 * The events topic keeps the producer's compression (docs/security.md, section 4). Before
 * the stand-in reader (packages/kafka patches/unreadable-batches.ts), one Snappy batch on
 * it made kafkajs give up on the aggregator's consumer: the worker failed, was replaced,
 * met the batch again in replay, and nothing behind it was ever counted; one gzip batch
 * of a few hundred KiB was decompressed whole (hundreds of MiB) by every reader.
 * Both are now dead-lettered as one record each, and the flood behind them is banned.
 */
describe('attack: event batches the aggregator cannot read', () => {
  const suite = floodSuite();

  it('dead-letters a Snappy batch and a gzip bomb on the flood partition, then bans the flood behind them', async () => {
    const { kafka, producer, topics } = suite.broker;
    const events = topics.name('events');
    const dlq = await new TopicTail<DlqRecord>(kafka, topics.name('dlq'), (b) => catalog.codec(SCHEMA_NAMES.dlqRecord).decode(b)).start();
    const a = await suite.aggregator({ AGGREGATOR_HOT_SHARE: '0', AGGREGATOR_TICK_MS: '20', AGGREGATOR_SESSION_TIMEOUT_MS: '6000' });
    try {
      const key = eventPartitionKey(FLOODER);
      const value = catalog.codec(SCHEMA_NAMES.requestEventBatch).encode({ events: [event(FLOODER, Date.now())] });
      await sendSnappy(producer, events, [
        { key, value },
        { key, value },
      ]);
      // Zeros past the bound: about a thousandth of that as gzip, which the broker takes as written.
      const bomb = Buffer.alloc(MAX_DECOMPRESSED_BATCH_BYTES + (1 << 20));
      await producer.send({ topic: events, acks: -1, compression: CompressionTypes.GZIP, messages: [{ key, value: bomb }] });

      expect(await suite.floodUntilBanned(a, 60_000)).toMatchObject({ policyId: 'flood', origin: 'aggregator' });
      const letters = () => dlq.records.map((r) => r.value!).filter((l) => l.originalTopic === events && l.reasonCode === 'KAFKA_BATCH_UNREADABLE');
      await waitUntil(
        () => letters().length >= 2,
        () => `two dead letters for the unreadable batches, got ${JSON.stringify(dlq.records.map((r) => r.value?.reasonMessage))}`,
        30_000,
      );
      const messages = letters().map((l) => l.reasonMessage);
      expect(messages).toContainEqual(expect.stringMatching(/^record batch at offsets \d+ to \d+ skipped unread: KafkaJSNotImplemented: Snappy compression not implemented$/));
      expect(messages).toContainEqual(expect.stringMatching(/^record batch at offset \d+ skipped unread: gzip batch larger than 32 MiB once decompressed$/));
      // Counted once Kafka took the dead letters, which a reader may see first.
      await waitUntil(async () => (await a.metric('banstream_aggregator_dlq_records_total', 'reason="KAFKA_BATCH_UNREADABLE"')) >= 2, 'the dead letters counted');
      // One worker did it all: none was given up on and replaced.
      expect(a.proc.output()).not.toMatch(/worker died|worker exited/);
    } finally {
      await dlq.stop();
    }
  }, 180_000);
});
