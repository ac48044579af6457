import type { Kafka, KafkaConfig, LogEntry } from 'kafkajs';
import type { Logger } from '@banstream/platform';
import { kafkajs } from './kafkajs.js';

export interface KafkaClientOptions {
  brokers: readonly string[];
  clientId: string;
  logger: Logger;
  /** Upper bound for one broker request; the whole retry budget stays a small multiple of it. */
  requestTimeoutMs?: number;
}

/**
 * A kafkajs client whose every wait is bounded: a broker that is down makes calls
 * fail within seconds (retryable KAFKA_UNAVAILABLE upstream) instead of hanging.
 * The first client loads kafkajs: installKafkaPatches() belongs before it.
 */
export function createKafka(options: KafkaClientOptions): Kafka {
  const { Kafka, logLevel } = kafkajs();
  const requestTimeout = options.requestTimeoutMs ?? 5_000;
  const log = options.logger.child({ component: 'kafkajs' });
  const config: KafkaConfig = {
    clientId: options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: Math.min(3_000, requestTimeout),
    requestTimeout,
    enforceRequestTimeout: true,
    retry: { initialRetryTime: 100, maxRetryTime: 1_000, retries: 5 },
    logLevel: logLevel.WARN,
    logCreator: () => (entry: LogEntry) => forwardKafkaLog(log, entry),
  };
  return new Kafka(config);
}

function forwardKafkaLog(log: Logger, { namespace, level, log: record }: LogEntry): void {
  const { logLevel } = kafkajs();
  const { message, timestamp: _ts, logger: _l, ...fields } = record;
  // kafkajs logs every error response at ERROR, also the ones it retries (a
  // coordinator still loading); what really fails reaches our code as an exception.
  if (level === logLevel.ERROR && namespace !== 'Connection') log.error(fields, message);
  else if (level === logLevel.ERROR) log.warn({ namespace, ...fields }, message);
  else if (level === logLevel.WARN) log.warn(fields, message);
  else if (level === logLevel.INFO) log.info(fields, message);
  else log.debug(fields, message);
}

/** KAFKA_BROKERS is validated by the config schema; this only splits it. */
export function parseBrokers(list: string): string[] {
  return list
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b.length > 0);
}
