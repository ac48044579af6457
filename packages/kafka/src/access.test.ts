import { EventEmitter } from 'node:events';
import { KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError, KafkaJSSASLAuthenticationError, type Kafka } from 'kafkajs';
import { describe, expect, it, vi } from 'vitest';
import { isBanstreamError } from '@banstream/core';
import { createLogger } from '@banstream/platform';
import { accessRefusal, guardAccess, namedRefusal } from './access.js';

/** kafkajs's own error for a protocol error code, as its response decoders raise it. */
function protocolError(type: string, code: number, message: string): Error {
  return new KafkaJSProtocolError({ type, code, retriable: false, message } as unknown as Error);
}
const topicRefused = () => protocolError('TOPIC_AUTHORIZATION_FAILED', 29, 'Not authorized to access topics: [Topic authorization failed]');
const groupRefused = () => protocolError('GROUP_AUTHORIZATION_FAILED', 30, 'Not authorized to access group: Group authorization failed');
const principal = 'User:enforcer';
/** kafkajs's constructors take more than its types say. */
const nonRetriable = (e: Error) => new (KafkaJSNonRetriableError as unknown as new (e: Error, o: { cause: Error }) => Error)(e, { cause: e });
const retriesExceeded = (e: Error) => new (KafkaJSNumberOfRetriesExceeded as unknown as new (e: Error, o: { retryCount: number; retryTime: number }) => Error)(e, { retryCount: 5, retryTime: 100 });

describe('namedRefusal', () => {
  it('names the operation, topic and principal of a refusal however kafkajs wrapped it', () => {
    // The retrier wraps a non-retriable error, its cause the protocol error.
    const wrapped = nonRetriable(topicRefused());
    for (const error of [topicRefused(), wrapped, retriesExceeded(topicRefused())]) {
      const named = namedRefusal(error, { operation: 'WRITE', topics: ['banstream.bans.v1'], principal });
      expect(isBanstreamError(named, 'KAFKA_ACCESS_DENIED')).toBe(true);
      expect((named as Error).message).toBe('Kafka refused WRITE on topic banstream.bans.v1 for principal User:enforcer (TOPIC_AUTHORIZATION_FAILED)');
      expect((named as Error).cause).toBe(error);
      expect(accessRefusal(named)).toBe('TOPIC_AUTHORIZATION_FAILED');
    }
  });

  it('names the group of a group refusal, and a failed login', () => {
    expect((namedRefusal(groupRefused(), { operation: 'READ', topics: ['t'], group: 'banstream-enforcer.bans.1', principal }) as Error).message).toBe(
      'Kafka refused READ on group banstream-enforcer.bans.1 for principal User:enforcer (GROUP_AUTHORIZATION_FAILED)',
    );
    const login = new (KafkaJSSASLAuthenticationError as unknown as new (m: string) => Error)(
      'SASL SCRAM SHA512 authentication failed: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512',
    );
    expect((namedRefusal(login, { operation: 'CONNECT', principal }) as Error).message).toMatch(/^Kafka refused the SASL login of principal User:enforcer \(SASL_AUTHENTICATION_FAILED\): SASL SCRAM/);
  });

  it('leaves every other error as it is, and a named one named once', () => {
    const other = protocolError('NOT_LEADER_FOR_PARTITION', 6, 'not the leader');
    expect(namedRefusal(other, { operation: 'WRITE', topics: ['t'], principal })).toBe(other);
    const named = namedRefusal(topicRefused(), { operation: 'WRITE', topics: ['a'], principal });
    expect(namedRefusal(named, { operation: 'READ', topics: ['b'], principal })).toBe(named);
  });
});

describe('guardAccess', () => {
  function fakeKafka() {
    const send = vi.fn(async (_record: unknown): Promise<unknown> => {
      throw nonRetriable(topicRefused());
    });
    const crashes = new EventEmitter();
    const consumer = {
      events: { CRASH: 'consumer.crash' },
      on: (name: string, listener: (event: unknown) => void) => crashes.on(name, listener),
      connect: async () => undefined,
      subscribe: async () => {
        throw topicRefused();
      },
    };
    const admin = { fetchTopicOffsets: async () => Promise.reject(topicRefused()), describeCluster: async () => ({ brokers: [] }) };
    const kafka = { producer: () => ({ send, sendBatch: send, connect: async () => undefined }), consumer: () => consumer, admin: () => admin } as unknown as Kafka;
    return { kafka, crashes };
  }
  const lines: string[] = [];
  const logger = createLogger({ service: 'unit', level: 'info', destination: { write: (l: string) => lines.push(l) } as never });

  it("renames a producer's, a subscription's and an admin's refusals", async () => {
    const kafka = guardAccess(fakeKafka().kafka, principal, logger);
    await expect(kafka.producer().send({ topic: 'banstream.bans.v1', messages: [] })).rejects.toThrow(
      'Kafka refused WRITE on topic banstream.bans.v1 for principal User:enforcer (TOPIC_AUTHORIZATION_FAILED)',
    );
    await expect(
      kafka.producer().sendBatch({
        topicMessages: [
          { topic: 'a', messages: [] },
          { topic: 'b', messages: [] },
        ],
      }),
    ).rejects.toThrow('Kafka refused WRITE on topic a, b');
    await expect(kafka.consumer({ groupId: 'g' }).subscribe({ topics: ['banstream.counts.v1'] })).rejects.toThrow('Kafka refused READ on topic banstream.counts.v1 for principal');
    await expect(kafka.admin().fetchTopicOffsets('banstream.policies.v1')).rejects.toThrow('Kafka refused DESCRIBE on topic banstream.policies.v1');
    await expect(kafka.admin().describeCluster()).resolves.toEqual({ brokers: [] });
  });

  it('names the refusal a consumer crashed on for every later crash listener, and logs it', () => {
    const { kafka, crashes } = fakeKafka();
    const consumer = guardAccess(kafka, principal, logger).consumer({ groupId: 'banstream-enforcer.bans.1' });
    const seen: unknown[] = [];
    consumer.on(consumer.events.CRASH, (event) => seen.push(event.payload.error));
    crashes.emit('consumer.crash', { payload: { error: nonRetriable(groupRefused()), groupId: 'g', restart: false } });
    expect((seen[0] as Error).message).toBe('Kafka refused READ on group banstream-enforcer.bans.1 for principal User:enforcer (GROUP_AUTHORIZATION_FAILED)');
    logger.flush();
    expect(lines.join('')).toContain('GROUP_AUTHORIZATION_FAILED');
  });
});

describe('untrusted broker certificates', () => {
  it('names the broker and the TLS settings to check when a broker certificate is not trusted', async () => {
    const { KafkaJSConnectionError } = await import('kafkajs');
    const error = retriesExceeded(
      new KafkaJSConnectionError('Connection error: self-signed certificate in certificate chain', { broker: '127.0.0.1:9093', code: 'SELF_SIGNED_CERT_IN_CHAIN' } as never),
    );
    expect((namedRefusal(error, { operation: 'CONNECT', principal }) as Error).message).toBe(
      'TLS: the certificate of Kafka broker 127.0.0.1:9093 is not trusted (SELF_SIGNED_CERT_IN_CHAIN: self-signed certificate in certificate chain): check KAFKA_TLS_CA_FILE (and KAFKA_TLS_SERVERNAME)',
    );
  });
});
