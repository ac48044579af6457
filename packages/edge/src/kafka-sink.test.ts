import { describe, expect, it } from 'vitest';
import type { Kafka } from '@banstream/kafka';
import { Writable } from 'node:stream';
import { createLogger } from '@banstream/platform';
import { keyPartition } from '@banstream/core';
import { createKafkaSink, producerStateLost } from './kafka-sink.js';
import { isPermanentFailure } from './sink.js';

const logger = createLogger({ service: 'test', level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) });

/** What kafkajs throws when the broker refuses an idempotent producer's sequence: a non-retriable protocol error in a retry wrapper. */
function outOfOrder(): Error {
  const protocol = Object.assign(new Error('The broker received an out of order sequence number'), { name: 'KafkaJSProtocolError', type: 'OUT_OF_ORDER_SEQUENCE_NUMBER', retriable: false });
  return Object.assign(new Error(protocol.message), { name: 'KafkaJSNonRetriableError', cause: protocol });
}

/** Producers that fail every send with `failure` for the first one made, and succeed after. */
function fakeKafka(failure: Error) {
  const made: { sent: number; disconnected: boolean }[] = [];
  const kafka = {
    producer: (options: { createPartitioner: () => (args: { topic: string; partitionMetadata: unknown[]; message: { key: string } }) => number }) => {
      const p = { sent: 0, disconnected: false };
      const first = made.length === 0;
      const partition = options.createPartitioner();
      made.push(p);
      return {
        connect: async () => undefined,
        disconnect: async () => void (p.disconnected = true),
        send: async ({ topic, messages }: { topic: string; messages: { key: string }[] }) => {
          if (first) throw failure;
          p.sent++;
          // Answered for every partition written, as kafkajs does.
          return [...new Set(messages.map((message) => partition({ topic, partitionMetadata: [{}], message })))].map((q) => ({ topicName: topic, partition: q, errorCode: 0 }));
        },
      };
    },
  } as unknown as Kafka;
  return { kafka, made };
}

/**
 * A producer that routes with the sink's partitioner and, on its first send, answers
 * for every partition but `skipped` (kafkajs 2.2.4 after a leader moved mid-send).
 */
function skippingKafka(skipped: number) {
  const sends: { partition: number; value: string }[][] = [];
  const kafka = {
    producer: (options: { createPartitioner: () => (args: { topic: string; partitionMetadata: unknown[]; message: { key: string } }) => number }) => {
      const partition = options.createPartitioner();
      return {
        connect: async () => undefined,
        disconnect: async () => undefined,
        send: async ({ topic, messages }: { topic: string; messages: { key: string; value: Buffer }[] }) => {
          const routed = messages.map((message) => ({ partition: partition({ topic, partitionMetadata: [{}, {}, {}], message }), value: message.value.toString() }));
          sends.push(routed);
          const answered = [...new Set(routed.map((r) => r.partition))].filter((p) => sends.length > 1 || p !== skipped);
          return answered.map((p) => ({ topicName: topic, partition: p, errorCode: 0, baseOffset: '0' }));
        },
      };
    },
  } as unknown as Kafka;
  return { kafka, sends };
}

describe('the Kafka sink', () => {
  it('sends again the records of a partition the send was not answered for, and only those', async () => {
    const { kafka, sends } = skippingKafka(keyPartition('b', 3));
    const sink = createKafkaSink({ kafka, topic: 'events', logger, reconnectMs: 1 });
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
    await sink.send(keys.map((k) => ({ key: k, value: Buffer.from(k) })));
    expect(sends).toHaveLength(2);
    const again = keys.filter((k) => keyPartition(k, 3) === keyPartition('b', 3));
    expect(sends[1]!.map((r) => r.value)).toEqual(again);
    expect(again.length).toBeLessThan(keys.length);
  });

  it('replaces a producer whose sequence the broker refused (after an outage) and sends again, instead of dropping records for good', async () => {
    const { kafka, made } = fakeKafka(outOfOrder());
    const sink = createKafkaSink({ kafka, topic: 'events', logger, reconnectMs: 1 });
    const records = [{ key: '10.0.0.0/24', value: Buffer.from('x') }];
    const error = await sink.send(records).catch((e: unknown) => e);
    expect(isPermanentFailure(error)).toBe(false);
    await sink.send(records);
    expect(made.map((p) => [p.sent, p.disconnected])).toEqual([
      [0, true],
      [1, false],
    ]);
  });

  it('leaves other refusals as they are: a record too large stays permanent', async () => {
    const tooLarge = Object.assign(new Error('too large'), { name: 'KafkaJSProtocolError', type: 'MESSAGE_TOO_LARGE', retriable: false });
    const { kafka, made } = fakeKafka(tooLarge);
    const sink = createKafkaSink({ kafka, topic: 'events', logger, reconnectMs: 1 });
    const error = await sink.send([{ key: 'k', value: Buffer.from('x') }]).catch((e: unknown) => e);
    expect(isPermanentFailure(error)).toBe(true);
    expect(producerStateLost(error)).toBeUndefined();
    expect(made).toHaveLength(1);
  });
});
