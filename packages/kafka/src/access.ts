import { BanstreamError } from '@banstream/core';
import type { Logger } from '@banstream/platform';
import type { Admin, Consumer, Kafka, Producer } from 'kafkajs';

/**
 * Kafka's refusals of a principal, mapped once for every client the port makes: kafkajs
 * reports an ACL refusal as "Not authorized to access topics: [Topic authorization
 * failed]", naming neither the topic nor the operation, and a consumer it refuses
 * crashes for good without a word to its owner. Here each refusal becomes a
 * KAFKA_ACCESS_DENIED (not retryable) whose message names the operation, the topic or
 * group, and the principal, e.g. "Kafka refused WRITE on topic banstream.bans.v1 for
 * principal User:enforcer (TOPIC_AUTHORIZATION_FAILED)".
 */
export const ACCESS_REFUSALS = [
  'TOPIC_AUTHORIZATION_FAILED',
  'GROUP_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
  'SASL_AUTHENTICATION_FAILED',
] as const;
export type AccessRefusal = (typeof ACCESS_REFUSALS)[number];

/** What was being done when Kafka refused: Kafka's ACL operation and the resources. */
export interface AccessAttempt {
  operation: 'READ' | 'WRITE' | 'CREATE' | 'DELETE' | 'ALTER' | 'DESCRIBE' | 'DESCRIBE_CONFIGS' | 'ALTER_CONFIGS' | 'IDEMPOTENT_WRITE' | 'CONNECT';
  topics?: readonly string[];
  group?: string;
  principal: string;
}

/** The refusal inside an error kafkajs raised (it wraps them in retry and aggregate errors), if it is one. */
export function accessRefusal(error: unknown): AccessRefusal | undefined {
  const seen = new Set<unknown>();
  const stack: unknown[] = [error];
  while (stack.length > 0) {
    const e = stack.pop() as { type?: unknown; name?: unknown; cause?: unknown; errors?: unknown; originalError?: unknown } | null | undefined;
    if (!e || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    if (e instanceof BanstreamError) {
      if (e.code === 'KAFKA_ACCESS_DENIED') return (e.details as { refusal?: AccessRefusal }).refusal;
      stack.push(e.cause);
      continue;
    }
    if (typeof e.type === 'string' && (ACCESS_REFUSALS as readonly string[]).includes(e.type)) return e.type as AccessRefusal;
    if (e.name === 'KafkaJSSASLAuthenticationError') return 'SASL_AUTHENTICATION_FAILED';
    stack.push(e.cause, e.originalError);
    if (Array.isArray(e.errors)) stack.push(...e.errors);
  }
  return undefined;
}

/** Node's codes for a server certificate it does not trust: the client's TLS settings, not the network, are at fault. */
const UNTRUSTED_CERTIFICATE = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** A broker certificate the client refused, found anywhere in the error's chain: its broker and Node's code. */
export function untrustedBroker(error: unknown): { broker: string; code: string; message: string } | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== null && typeof current === 'object'; depth++) {
    const e = current as { code?: unknown; broker?: unknown; message?: unknown; cause?: unknown; originalError?: unknown };
    if (typeof e.code === 'string' && UNTRUSTED_CERTIFICATE.has(e.code)) return { broker: typeof e.broker === 'string' ? e.broker : 'the broker', code: e.code, message: String(e.message) };
    current = e.cause ?? e.originalError;
  }
  return undefined;
}

/** The error to raise instead of `error`: a KAFKA_ACCESS_DENIED naming the attempt, or `error` itself when it is no refusal (or already named). */
export function namedRefusal(error: unknown, attempt: AccessAttempt): unknown {
  if (error instanceof BanstreamError && error.code === 'KAFKA_ACCESS_DENIED') return error;
  const refusal = accessRefusal(error);
  if (!refusal) {
    const tls = untrustedBroker(error);
    if (!tls) return error;
    return new BanstreamError(
      'KAFKA_ACCESS_DENIED',
      `TLS: the certificate of Kafka broker ${tls.broker} is not trusted (${tls.code}: ${tls.message.replace(/^Connection error: /, '')}): check KAFKA_TLS_CA_FILE (and KAFKA_TLS_SERVERNAME)`,
      { cause: error, details: { refusal: tls.code, broker: tls.broker } },
    );
  }
  const { operation, topics = [], group, principal } = attempt;
  let what: string;
  if (refusal === 'SASL_AUTHENTICATION_FAILED') what = `Kafka refused the SASL login of principal ${principal}`;
  else if (refusal === 'GROUP_AUTHORIZATION_FAILED') what = `Kafka refused ${operation === 'WRITE' ? 'READ' : operation} on group ${group ?? '<unknown>'} for principal ${principal}`;
  else if (refusal === 'CLUSTER_AUTHORIZATION_FAILED') what = `Kafka refused ${operation} on the cluster${topics.length > 0 ? ` (for topic ${topics.join(', ')})` : ''} for principal ${principal}`;
  else if (refusal === 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED') what = `Kafka refused ${operation} on a transactional id for principal ${principal}`;
  else what = `Kafka refused ${operation} on topic ${topics.length > 0 ? topics.join(', ') : '<unknown>'} for principal ${principal}`;
  const detail = refusal === 'SASL_AUTHENTICATION_FAILED' ? `: ${(error as Error).message}` : '';
  return new BanstreamError('KAFKA_ACCESS_DENIED', `${what} (${refusal})${detail}`, {
    cause: error,
    details: { refusal, operation, principal, ...(topics.length > 0 ? { topics: [...topics] } : {}), ...(group === undefined ? {} : { group }) },
  });
}

type AnyFn = (...args: never[]) => unknown;

/** Replaces `target[name]` by a function that renames refusals of the attempt `describe` gives for its arguments. */
function guard<T extends object>(target: T, name: keyof T & string, describe: (args: unknown[]) => Omit<AccessAttempt, 'principal'>, principal: string): void {
  const original = target[name] as unknown as AnyFn | undefined;
  if (typeof original !== 'function') return;
  const wrapped = async (...args: unknown[]) => {
    try {
      return await (original as (...a: unknown[]) => unknown).apply(target, args);
    } catch (error) {
      throw namedRefusal(error, { ...describe(args), principal });
    }
  };
  (target as unknown as Record<string, unknown>)[name] = wrapped;
}

const first = <A>(args: unknown[]) => (args[0] ?? {}) as A;
const topicsOf = (records: readonly { topic: string }[] | undefined) => [...new Set((records ?? []).map((r) => r.topic))];

function guardProducer(producer: Producer, principal: string): Producer {
  // An idempotent producer asks for its id at connect: refused unless the cluster grants IDEMPOTENT_WRITE.
  guard(producer, 'connect', () => ({ operation: 'IDEMPOTENT_WRITE' }), principal);
  guard(producer, 'send', (a) => ({ operation: 'WRITE', topics: [first<{ topic: string }>(a).topic] }), principal);
  guard(producer, 'sendBatch', (a) => ({ operation: 'WRITE', topics: topicsOf(first<{ topicMessages?: { topic: string }[] }>(a).topicMessages) }), principal);
  return producer;
}

function guardConsumer(consumer: Consumer, groupId: string, principal: string, logger: Logger): Consumer {
  let topics: string[] = [];
  guard(consumer, 'connect', () => ({ operation: 'CONNECT' }), principal);
  const subscribe = consumer.subscribe.bind(consumer);
  consumer.subscribe = async (subscription) => {
    const named = 'topics' in subscription ? subscription.topics : [subscription.topic];
    topics = [...new Set([...topics, ...named.map(String)])];
    try {
      return await subscribe(subscription);
    } catch (error) {
      throw namedRefusal(error, { operation: 'READ', topics: named.map(String), group: groupId, principal });
    }
  };
  // A refusal inside the run loop (joining the group, fetching) crashes the consumer for
  // good (not retryable). Registered first, this listener names the refusal in the
  // crash event every later listener gets, and logs it once.
  consumer.on(consumer.events.CRASH, (event) => {
    const payload = event.payload as { error: Error; groupId: string; restart: boolean };
    const named = namedRefusal(payload.error, { operation: 'READ', topics, group: groupId, principal });
    if (named === payload.error) return;
    payload.error = named as Error;
    logger.fatal({ err: named, code: 'KAFKA_ACCESS_DENIED', group: groupId, topics }, (named as Error).message);
  });
  return consumer;
}

const ADMIN_ATTEMPTS: Partial<Record<keyof Admin, (args: unknown[]) => Omit<AccessAttempt, 'principal'>>> = {
  connect: () => ({ operation: 'CONNECT' }),
  createTopics: (a) => ({ operation: 'CREATE', topics: topicsOf(first<{ topics?: { topic: string }[] }>(a).topics) }),
  createPartitions: (a) => ({ operation: 'ALTER', topics: topicsOf(first<{ topicPartitions?: { topic: string }[] }>(a).topicPartitions) }),
  deleteTopics: (a) => ({ operation: 'DELETE', topics: first<{ topics?: string[] }>(a).topics ?? [] }),
  fetchTopicMetadata: (a) => ({ operation: 'DESCRIBE', topics: first<{ topics?: string[] }>(a).topics ?? [] }),
  fetchTopicOffsets: (a) => ({ operation: 'DESCRIBE', topics: [String(a[0])] }),
  fetchTopicOffsetsByTimestamp: (a) => ({ operation: 'DESCRIBE', topics: [String(a[0])] }),
  fetchOffsets: (a) => ({ operation: 'DESCRIBE', group: first<{ groupId: string }>(a).groupId, topics: first<{ topics?: string[] }>(a).topics ?? [] }),
  setOffsets: (a) => ({ operation: 'READ', group: first<{ groupId: string }>(a).groupId, topics: [first<{ topic: string }>(a).topic] }),
  resetOffsets: (a) => ({ operation: 'READ', group: first<{ groupId: string }>(a).groupId, topics: [first<{ topic: string }>(a).topic] }),
  deleteGroups: (a) => ({ operation: 'DELETE', group: ((a[0] as string[] | undefined) ?? []).join(', ') }),
  describeGroups: (a) => ({ operation: 'DESCRIBE', group: ((a[0] as string[] | undefined) ?? []).join(', ') }),
  describeConfigs: (a) => ({ operation: 'DESCRIBE_CONFIGS', topics: (first<{ resources?: { name: string }[] }>(a).resources ?? []).map((r) => r.name) }),
  alterConfigs: (a) => ({ operation: 'ALTER_CONFIGS', topics: (first<{ resources?: { name: string }[] }>(a).resources ?? []).map((r) => r.name) }),
  describeCluster: () => ({ operation: 'DESCRIBE' }),
  listTopics: () => ({ operation: 'DESCRIBE' }),
};

function guardAdmin(admin: Admin, principal: string): Admin {
  for (const [name, describe] of Object.entries(ADMIN_ATTEMPTS)) guard(admin, name as keyof Admin, describe, principal);
  return admin;
}

/**
 * The client with refusals named: its producers, consumers and admins are kafkajs's own
 * objects, a few of their methods wrapped (one await each, off the per-record paths).
 * A refused group is named only with installKafkaPatches() (patches/coordinator-refusals-fix.ts):
 * kafkajs itself drops that refusal.
 */
export function guardAccess(kafka: Kafka, principal: string, logger: Logger): Kafka {
  const producer = kafka.producer.bind(kafka);
  const consumer = kafka.consumer.bind(kafka);
  const admin = kafka.admin.bind(kafka);
  kafka.producer = (config) => guardProducer(producer(config), principal);
  kafka.consumer = (config) => guardConsumer(consumer(config), config.groupId, principal, logger);
  kafka.admin = (config) => guardAdmin(admin(config), principal);
  return kafka;
}
