import { createKafka, waitForTopicLeaders, type Admin, type Kafka, type Producer } from '@banstream/kafka';
import { withDeadline, type Logger } from '@banstream/platform';
import { BanstreamError } from '@banstream/core';
import { uniqueName } from './infra.js';

/** Bounds used by the harness: a dead broker fails a test in seconds, never hangs it. */
export const PRODUCE_DEADLINE_MS = 10_000;

export function testKafka(brokers: string, logger: Logger): Kafka {
  return createKafka({ brokers: brokers.split(','), clientId: uniqueName('test'), logger, requestTimeoutMs: 3_000 });
}

/**
 * Creates topics and waits until each partition has a leader. Not kafkajs's `waitForLeaders: true`:
 * on a cluster of several nodes it gave up when the node it asked did not know the topic yet
 * (UNKNOWN_TOPIC_OR_PARTITION; a CI run of fault-leader-move-send failed on it).
 */
export async function createTopicsLed(admin: Admin, topics: Parameters<Admin['createTopics']>[0]['topics']): Promise<void> {
  await admin.createTopics({ waitForLeaders: false, topics });
  await waitForTopicLeaders(
    admin,
    topics.map((t) => t.topic),
  );
}

/** Creates a topic with a random name and registers nothing global: the caller deletes it. */
export async function createTestTopic(admin: Admin, prefix: string, partitions = 3, configs: Record<string, string> = {}): Promise<string> {
  const topic = uniqueName(prefix);
  await createTopicsLed(admin, [{ topic, numPartitions: partitions, configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })) }]);
  return topic;
}

/**
 * Sends and waits for the acknowledgement of every in-sync replica, within a
 * deadline. A broker that dies mid-test becomes a KAFKA_UNAVAILABLE error naming
 * the topic and the cause, not a hang.
 */
export async function produceOrFail(producer: Producer, topic: string, messages: { key: string; value: Buffer | null }[]): Promise<void> {
  try {
    await withDeadline(producer.send({ topic, acks: -1, messages }), PRODUCE_DEADLINE_MS, `producing ${messages.length} record(s) to ${topic}`);
  } catch (cause) {
    if (cause instanceof BanstreamError) throw cause;
    throw new BanstreamError('KAFKA_UNAVAILABLE', `producing to ${topic} failed: ${(cause as Error).message}`, { cause, retryable: true });
  }
}
