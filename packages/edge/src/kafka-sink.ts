import { Partitioners, type Kafka } from 'kafkajs';
import type { Logger } from '@banstream/platform';
import type { KeyedRecord, RecordSink } from './sink.js';

export interface KafkaSinkOptions {
  kafka: Kafka;
  topic: string;
  logger: Logger;
  /** Pause between two connection attempts while Kafka is unreachable. */
  reconnectMs: number;
}

/**
 * Records to Kafka through an idempotent producer, acknowledged by every in-sync
 * replica, partitioned by kafkajs's default partitioner (murmur2 of the key, as the
 * Java client), so one client network always lands on one partition. The producer
 * retries each send without limit (what idempotence needs to keep order and avoid
 * duplicates); the publisher's memory budget is what bounds an outage.
 */
export function createKafkaSink(options: KafkaSinkOptions): RecordSink {
  const { kafka, topic, logger, reconnectMs } = options;
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 5,
    allowAutoTopicCreation: false,
    retry: { retries: Number.MAX_SAFE_INTEGER },
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  let closed = false;
  let connecting: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  // Connects until it succeeds or the sink closes: an edge may start before Kafka.
  async function connect(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      if (closed) throw new Error('the Kafka sink is closed');
      try {
        await producer.connect();
        if (attempt > 1) logger.info({ topic, attempts: attempt }, 'kafka producer connected');
        return;
      } catch (error) {
        if (attempt === 1) logger.warn({ topic, err: error }, 'kafka unreachable: buffering events and retrying');
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, reconnectMs).unref();
        });
      }
    }
  }

  return {
    async send(records: readonly KeyedRecord[]) {
      connecting ??= connect();
      await connecting;
      await producer.send({ topic, acks: -1, messages: records as KeyedRecord[] });
    },
    async close() {
      closed = true;
      wake?.();
      await producer.disconnect();
    },
  };
}
