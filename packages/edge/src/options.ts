import type { Kafka } from '@banstream/kafka';
import type { Logger, Registry } from '@banstream/platform';
import type { SchemaCatalog } from '@banstream/schemas';
import type { RecordSink } from './sink.js';

export interface EdgePublisherOptions {
  /**
   * A Kafka client; `createKafka` from @banstream/kafka gives one whose waits are bounded,
   * with TLS and SASL from its `security` option (`kafkaSecurityFromConfig` reads the
   * services' KAFKA_TLS_* and KAFKA_SASL_* variables; docs/operations/kafka-security.md).
   * An edge's principal needs WRITE on the events topic only.
   */
  kafka?: Kafka;
  /** The events topic, e.g. `topicFullName('banstream.', 'events')`. */
  topic?: string;
  /** Instead of `kafka` and `topic`: where the records go (tests give a fake). */
  sink?: RecordSink;
  logger: Logger;
  /** Metrics go here; the publisher makes its own registry when none is given. */
  registry?: Registry;
  /** Memory budget of buffered plus in-flight events, estimated per event. Default 64 MiB. */
  budgetBytes?: number;
  /** Longest wait before a partly filled send goes out. Default 5 ms. */
  lingerMs?: number;
  /** Events per Kafka record (one RequestEventBatch). Default 500. */
  maxEventsPerRecord?: number;
  /**
   * Event-time span of one record, in ms. Default 1000: well under the aggregator's
   * grace (5 s), so a backlog sent at once still reaches each partition in time order
   * within that grace and is counted.
   */
  maxRecordSpanMs?: number;
  /** Events per send (one produce request, many records). Default 5000. */
  maxEventsPerSend?: number;
  /** Estimated bytes per send; a send starts as soon as this much is buffered. Default 1 MiB. */
  maxBytesPerSend?: number;
  /**
   * Sends awaiting acknowledgement at once: 1 (the default, and the only value the
   * Kafka sink takes). With more, Kafka's idempotent producer (kafkajs) can hand a
   * failed send's sequence numbers to the next send; had the failed one been written
   * after all, the broker would take the next for its duplicate, acknowledge it and
   * not write it. A custom sink may take more.
   */
  maxInFlight?: number;
  /** Pause after a failed send before the next attempt, and between connection attempts. Default 500 ms. */
  retryBackoffMs?: number;
  /** At most one log line about dropped events per this interval. Default 10 s. */
  dropLogIntervalMs?: number;
  /** The schema catalog; loaded from @banstream/schemas when not given. */
  catalog?: SchemaCatalog;
  /**
   * Installs banstream's kafkajs patches (`installKafkaPatches` from @banstream/kafka,
   * docs/decisions/kafkajs-patches.md) when true. Default false: the embedder's kafkajs is
   * left as it is. They act on the whole process, every kafkajs client in it included,
   * and the one-pass grouping only if kafkajs is not loaded yet: for all of them, call
   * `installKafkaPatches()` yourself before making your first Kafka client instead.
   */
  patchKafkajs?: boolean;
  /** A monotonic clock in ms (tests). */
  now?: () => number;
}

export interface ResolvedOptions {
  budgetBytes: number;
  lingerMs: number;
  maxEventsPerRecord: number;
  maxRecordSpanMs: number;
  maxEventsPerSend: number;
  maxBytesPerSend: number;
  maxInFlight: number;
  retryBackoffMs: number;
  dropLogIntervalMs: number;
}

export const DEFAULTS: ResolvedOptions = Object.freeze({
  budgetBytes: 64 * 1024 * 1024,
  lingerMs: 5,
  maxEventsPerRecord: 500,
  maxRecordSpanMs: 1_000,
  maxEventsPerSend: 5_000,
  maxBytesPerSend: 1024 * 1024,
  maxInFlight: 1,
  retryBackoffMs: 500,
  dropLogIntervalMs: 10_000,
});

/**
 * Defaults applied and every number checked once. In-flight sends cannot be
 * evicted, so they may hold at most half the budget: the other half always has
 * room for new events while Kafka is away.
 */
export function resolveOptions(options: EdgePublisherOptions): ResolvedOptions {
  const resolved = { ...DEFAULTS };
  for (const name of Object.keys(DEFAULTS) as (keyof ResolvedOptions)[]) {
    const value = options[name];
    if (value === undefined) continue;
    const min = name === 'lingerMs' || name === 'retryBackoffMs' || name === 'dropLogIntervalMs' ? 0 : 1;
    if (!Number.isInteger(value) || value < min) throw new RangeError(`edge publisher: ${name} must be an integer >= ${min} (got ${String(value)})`);
    resolved[name] = value;
  }
  resolved.maxBytesPerSend = Math.max(1, Math.min(resolved.maxBytesPerSend, Math.floor(resolved.budgetBytes / (2 * resolved.maxInFlight))));
  if (!options.sink && (!options.kafka || !options.topic)) throw new TypeError('edge publisher: give either `kafka` and `topic`, or a `sink`');
  if (!options.sink && resolved.maxInFlight !== 1) {
    throw new RangeError(`edge publisher: maxInFlight must be 1 with Kafka (got ${resolved.maxInFlight}): a second send in flight could reuse a failed send's sequence numbers and be lost`);
  }
  return Object.freeze(resolved);
}
