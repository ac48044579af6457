import { KeyPartitioner, sendUntilAnswered, type Kafka } from '@banstream/kafka';
import type { Logger } from '@banstream/platform';
import type { KeyedRecord, RecordSink } from './sink.js';

export interface KafkaSinkOptions {
  kafka: Kafka;
  topic: string;
  logger: Logger;
  /** Pause between two connection attempts while Kafka is unreachable. */
  reconnectMs: number;
}

/** Broker errors after which an idempotent producer id cannot write again, though the records could. */
const PRODUCER_STATE_ERRORS = new Set(['OUT_OF_ORDER_SEQUENCE_NUMBER', 'UNKNOWN_PRODUCER_ID', 'INVALID_PRODUCER_EPOCH']);

/** The producer-state error inside `error` (kafkajs wraps it in retry errors), if any. */
export function producerStateLost(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; depth < 8 && e !== null && typeof e === 'object'; depth++) {
    const { type, originalError, cause } = e as { type?: unknown; originalError?: unknown; cause?: unknown };
    if (typeof type === 'string' && PRODUCER_STATE_ERRORS.has(type)) return type;
    e = originalError ?? cause;
  }
  return undefined;
}

/**
 * Records to Kafka through an idempotent producer, acknowledged by every in-sync
 * replica, partitioned by murmur2 of the key as the Java client and kafkajs's default
 * partitioner do (KeyPartitioner, without kafkajs's cost), so one client network
 * always lands on one partition. The producer retries each send without limit (what
 * idempotence needs to keep order and avoid duplicates); the publisher's memory
 * budget is what bounds an outage.
 */
export function createKafkaSink(options: KafkaSinkOptions): RecordSink {
  const { kafka, topic, logger, reconnectMs } = options;
  const newProducer = () =>
    kafka.producer({
      idempotent: true,
      maxInFlightRequests: 5,
      allowAutoTopicCreation: false,
      retry: { retries: Number.MAX_SAFE_INTEGER },
      createPartitioner: KeyPartitioner,
    });
  let producer = newProducer();
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
      const used = producer;
      try {
        // A send can resolve without some partitions (their leader moved): their records go again, alone, by the same producer.
        await sendUntilAnswered(
          (pending) => used.send({ topic, acks: -1, messages: pending[0]!.messages }),
          [{ topic, messages: records.map((r) => ({ key: r.key, value: r.value })) }],
          (pending, round) => {
            logger.warn({ topic, round, records: pending[0]!.messages.length }, 'kafka answered the send without some partitions (their leader moved): sending their records again');
            if (closed) throw new Error('the Kafka sink is closed');
          },
        );
      } catch (error) {
        const lost = producerStateLost(error);
        if (!lost) throw error;
        // Sends that failed while the broker was away still advanced kafkajs's sequence
        // numbers: this producer id can write nothing more. A new one starts afresh; the
        // records were not written (a gap is what the broker refused), so they are sent again.
        if (used === producer) {
          producer = newProducer();
          connecting = undefined;
          void used.disconnect().catch(() => undefined);
          logger.warn({ topic, reason: lost }, 'kafka refused the producer sequence; sending again with a new producer');
        }
        throw new Error(`kafka refused the producer sequence (${lost}); sending again with a new producer`);
      }
    },
    async close() {
      closed = true;
      wake?.();
      await producer.disconnect();
    },
  };
}
