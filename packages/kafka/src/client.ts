import type { Consumer, Kafka, KafkaConfig, LogEntry } from 'kafkajs';
import type { Logger } from '@banstream/platform';
import { kafkajs } from './kafkajs.js';
import { guardAccess } from './access.js';
import { retriableKafkaError } from './retriable.js';
import { unreadableBatchesFixed } from './patches/unreadable-batches.js';
import { kafkaPrincipal, type KafkaSecurity } from './security.js';

export interface KafkaClientOptions {
  brokers: readonly string[];
  clientId: string;
  logger: Logger;
  /** Upper bound for one broker request; the whole retry budget stays a small multiple of it. */
  requestTimeoutMs?: number;
  /** TLS and SASL (`kafkaSecurityFromConfig` reads them from KAFKA_TLS_* and KAFKA_SASL_*); absent: plaintext, no login. */
  security?: KafkaSecurity;
}

/**
 * A kafkajs client whose every wait is bounded: a broker that is down makes calls
 * fail within seconds (retryable KAFKA_UNAVAILABLE upstream) instead of hanging.
 * Kafka's refusals of its principal (ACLs, a failed login) are raised as
 * KAFKA_ACCESS_DENIED naming the operation, topic or group, and principal (access.ts).
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
    retry: CLIENT_RETRY,
    logLevel: logLevel.WARN,
    logCreator: () => (entry: LogEntry) => forwardKafkaLog(log, entry),
    ...kafkajsSecurity(options.security),
  };
  const kafka = guardAccess(new Kafka(config), kafkaPrincipal(options.security), options.logger.child({ component: 'kafka' }));
  return producersAnswerWithin(requestTimeout, consumersRetryAsTheClient(warnOfUnguardedReaders(kafka, options.logger.child({ component: 'kafka' }))));
}

/**
 * Retries at most 300 ms apart, about 2.7 s in all (kafkajs's doubling up to 1 s with 5
 * retries gave 2.5 s): a partition whose leader died is written (and read) within a retry
 * of its new leader's election; with the doubling, a write went through 0.5 s or more
 * after it (npm run bench -- leader-move).
 */
export const CLIENT_RETRY = { initialRetryTime: 100, maxRetryTime: 300, retries: 10 } as const;

/**
 * kafkajs gives a consumer 5 retries of its own unless told otherwise, not the client's:
 * 300 ms apart that is 1.2 s, less than Kafka takes to move a dead broker's partitions
 * and group coordinators, and each consumer crash gives up its partitions. A consumer
 * made without `retry` gets the client's.
 */
export function consumersRetryAsTheClient(kafka: Kafka): Kafka {
  const consumer = kafka.consumer.bind(kafka);
  kafka.consumer = (config) => subscribesToNewTopics(consumer({ ...config, retry: { ...CLIENT_RETRY, ...config.retry } }));
  return kafka;
}

/**
 * The broker holds a Produce with acks=all up to the request's own `timeout` (kafkajs
 * sends 30 s unless told) waiting for the in-sync replicas, while the client gives up
 * after its request timeout, and the request-timeout patch then closes that connection:
 * to a healthy leader whose follower is slow, every few seconds. As the Java client
 * does, the broker is asked to answer (REQUEST_TIMED_OUT, which kafkajs retries) a
 * fifth of the request timeout, at most 1 s, before the client would give up. A send
 * that names its own `timeout` keeps it.
 */
export function producersAnswerWithin(requestTimeoutMs: number, kafka: Kafka): Kafka {
  const ackTimeout = Math.max(1, requestTimeoutMs - Math.min(1_000, Math.floor(requestTimeoutMs / 5)));
  const producer = kafka.producer.bind(kafka);
  kafka.producer = (config) => {
    const made = producer(config);
    const send = made.send.bind(made);
    const sendBatch = made.sendBatch.bind(made);
    made.send = (record) => send({ timeout: ackTimeout, ...record });
    made.sendBatch = (batch) => sendBatch({ timeout: ackTimeout, ...batch });
    return made;
  };
  return kafka;
}

/** How long a subscription waits for a topic the brokers do not all know yet. */
export const SUBSCRIBE_WAIT_MS = 15_000;

/**
 * kafkajs's subscribe asks one broker for the topic's metadata once, with no retry: on a
 * cluster of several nodes, a node may not know a topic just created yet
 * (UNKNOWN_TOPIC_OR_PARTITION), and a service started with topics it had just created
 * failed its start. Retriable errors are retried for SUBSCRIBE_WAIT_MS; a refusal (an
 * ACL) is not retriable and fails at once.
 */
export function subscribesToNewTopics(consumer: Consumer, waitMs = SUBSCRIBE_WAIT_MS, pauseMs = 200): Consumer {
  const subscribe = consumer.subscribe.bind(consumer);
  consumer.subscribe = async (subscription) => {
    const deadline = Date.now() + waitMs;
    for (;;) {
      try {
        return await subscribe(subscription);
      } catch (error) {
        if (!retriableKafkaError(error) || Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, pauseMs));
      }
    }
  };
  return consumer;
}

let warnedUnguarded = false;

/**
 * A consumer made while kafkajs reads batches as it ships (installKafkaPatches() not called
 * first, or called too late) can be stopped by one batch any producer writes
 * (patches/unreadable-batches.ts): said once per process, at error, when the first is made.
 */
function warnOfUnguardedReaders(kafka: Kafka, logger: Logger): Kafka {
  const consumer = kafka.consumer.bind(kafka);
  kafka.consumer = (config) => {
    if (!warnedUnguarded && !unreadableBatchesFixed()) {
      warnedUnguarded = true;
      logger.error(
        { groupId: config.groupId },
        'kafkajs reads batches unguarded (installKafkaPatches() was not called before the first Kafka client): one batch it cannot read (Snappy, LZ4, ZSTD, a gzip bomb) stops this consumer',
      );
    }
    return consumer(config);
  };
  return kafka;
}

/** kafkajs's `ssl` and `sasl` for the port's settings. A broker's certificate is always verified. */
function kafkajsSecurity(security: KafkaSecurity | undefined): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const out: Pick<KafkaConfig, 'ssl' | 'sasl'> = {};
  if (security?.tls) {
    const { ca, cert, key, passphrase, servername } = security.tls;
    out.ssl = {
      rejectUnauthorized: true,
      ...(ca === undefined ? {} : { ca: [ca] }),
      ...(cert === undefined ? {} : { cert }),
      ...(key === undefined ? {} : { key }),
      ...(passphrase === undefined ? {} : { passphrase }),
      ...(servername === undefined ? {} : { servername }),
    };
  }
  if (security?.sasl) {
    const { mechanism, username, password } = security.sasl;
    out.sasl = mechanism === 'plain' ? { mechanism, username, password } : mechanism === 'scram-sha-256' ? { mechanism, username, password } : { mechanism, username, password };
  }
  return out;
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
