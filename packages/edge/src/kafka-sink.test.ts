import { describe, expect, it } from 'vitest';
import type { Kafka } from '@banstream/kafka';
import { Writable } from 'node:stream';
import { createLogger } from '@banstream/platform';
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
    producer: () => {
      const p = { sent: 0, disconnected: false };
      const first = made.length === 0;
      made.push(p);
      return {
        connect: async () => undefined,
        disconnect: async () => void (p.disconnected = true),
        send: async () => {
          if (first) throw failure;
          p.sent++;
        },
      };
    },
  } as unknown as Kafka;
  return { kafka, made };
}

describe('the Kafka sink', () => {
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
