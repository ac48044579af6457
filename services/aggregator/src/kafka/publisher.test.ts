import { describe, expect, it } from 'vitest';
import { KeyPartitioner, namedRefusal, type Producer, type RenewableProducer } from '@banstream/kafka';
import { loadSchemaCatalog } from '@banstream/schemas';
import { Publisher, type AggregatorTopics } from './publisher.js';

const topics = Object.fromEntries(['events', 'subjects', 'counts', 'bans', 'dlq', 'policies', 'allowlist', 'alerts', 'baselines'].map((t) => [t, `b.${t}.v1`])) as unknown as AggregatorTopics;

/** kafkajs's refusal of a produce request, named as the port names it: every topic of the send, since Kafka does not say which. */
function refused(sent: string[]): Error {
  const error = Object.assign(new Error('Not authorized to access topics: [Topic authorization failed]'), { name: 'KafkaJSProtocolError', type: 'TOPIC_AUTHORIZATION_FAILED' });
  return namedRefusal(error, { operation: 'WRITE', topics: sent, principal: 'User:aggregator' }) as Error;
}

/** A producer whose principal may write every topic but bans, as a broker with that ACL taken back answers. */
function producerWithoutBans() {
  const sends: string[][] = [];
  const producer = {
    async sendBatch({ topicMessages }: { topicMessages: { topic: string }[] }) {
      const sent = topicMessages.map((t) => t.topic);
      sends.push(sent);
      if (sent.includes(topics.bans)) throw refused(sent);
      return [];
    },
  };
  const renewable = { producer: producer as unknown as Producer, renew: async () => undefined } as unknown as RenewableProducer;
  return { renewable, sends };
}

describe('Publisher and a topic Kafka refuses its principal', () => {
  it('names the one topic refused, not every topic of the send, by sending each alone', async () => {
    const { renewable, sends } = producerWithoutBans();
    const publisher = new Publisher(renewable, renewable, topics, loadSchemaCatalog());
    const publication = publisher.decisions({ bans: [{ key: 'ip:192.0.2.1', value: null }], counts: [{ key: 'p|ip:192.0.2.1', value: null }], alerts: [], baselines: [], history: [] });
    const error = (await publication().catch((e: unknown) => e)) as Error & { code?: string };
    expect(error.code).toBe('KAFKA_ACCESS_DENIED');
    expect(error.message).toBe('Kafka refused WRITE on topic b.bans.v1 for principal User:aggregator (TOPIC_AUTHORIZATION_FAILED)');
    expect(sends).toEqual([[topics.bans, topics.counts], [topics.bans]]);
  });

  it('leaves a refusal of a one-topic send as it is', async () => {
    const { renewable, sends } = producerWithoutBans();
    const publisher = new Publisher(renewable, renewable, topics, loadSchemaCatalog());
    const error = (await publisher
      .decisions({ bans: [{ key: 'ip:192.0.2.1', value: null }], counts: [], alerts: [], baselines: [], history: [] })()
      .catch((e: unknown) => e)) as Error;
    expect(error.message).toBe('Kafka refused WRITE on topic b.bans.v1 for principal User:aggregator (TOPIC_AUTHORIZATION_FAILED)');
    expect(sends).toEqual([[topics.bans]]);
  });
});

describe('Publisher and a send kafkajs resolved without a partition (its leader moved)', () => {
  it('sends the records of that partition again, and only those', async () => {
    const place = KeyPartitioner();
    const sends: { topic: string; key: string; partition: number }[][] = [];
    const producer = {
      async sendBatch({ topicMessages }: { topicMessages: { topic: string; messages: { key: string }[] }[] }) {
        const routed = topicMessages.flatMap(({ topic, messages }) =>
          messages.map((message) => ({ topic, key: message.key, partition: place({ topic, partitionMetadata: [{}, {}, {}] as never, message: message as never }) })),
        );
        sends.push(routed);
        // The first answer leaves out the bans topic's partition of the first ban.
        const skipped = sends.length === 1 ? routed.find((r) => r.topic === topics.bans)!.partition : -1;
        const answered = [...new Set(routed.map((r) => `${r.topic}|${r.partition}`))].map((t) => ({ topicName: t.split('|')[0]!, partition: Number(t.split('|')[1]) }));
        return answered.filter((a) => !(a.topicName === topics.bans && a.partition === skipped));
      },
    };
    const renewable = { producer: producer as unknown as Producer, renew: async () => undefined } as unknown as RenewableProducer;
    const publisher = new Publisher(renewable, renewable, topics, loadSchemaCatalog());
    const bans = Array.from({ length: 8 }, (_, i) => ({ key: `ip:192.0.2.${i}`, value: null }));
    await publisher.decisions({ bans, counts: [{ key: 'p|ip:192.0.2.1', value: null }], alerts: [], baselines: [], history: [] })();
    expect(sends).toHaveLength(2);
    const skipped = sends[0]!.find((r) => r.topic === topics.bans)!.partition;
    expect(sends[1]).toEqual(sends[0]!.filter((r) => r.topic === topics.bans && r.partition === skipped));
    expect(sends[1]!.length).toBeLessThan(bans.length);
  });
});

describe('Publisher sending each topic alone after a refusal, and a send resolved without a partition', () => {
  it('sends that partition again before the next topic', async () => {
    const place = KeyPartitioner();
    const sends: { topic: string; partition: number }[][] = [];
    const producer = {
      async sendBatch({ topicMessages }: { topicMessages: { topic: string; messages: { key: string }[] }[] }) {
        const routed = topicMessages.flatMap(({ topic, messages }) =>
          messages.map((message) => ({ topic, partition: place({ topic, partitionMetadata: [{}, {}, {}] as never, message: message as never }) })),
        );
        sends.push(routed);
        const sent = topicMessages.map((t) => t.topic);
        // The principal may not write counts; the bans sent alone are first answered without one partition.
        if (sent.includes(topics.counts)) throw refused(sent);
        const answered = [...new Set(routed.map((r) => r.partition))].map((partition) => ({ topicName: topics.bans, partition }));
        return sends.length === 2 ? answered.slice(1) : answered;
      },
    };
    const renewable = { producer: producer as unknown as Producer, renew: async () => undefined } as unknown as RenewableProducer;
    const publisher = new Publisher(renewable, renewable, topics, loadSchemaCatalog());
    const bans = Array.from({ length: 8 }, (_, i) => ({ key: `ip:192.0.2.${i}`, value: null }));
    const error = (await publisher
      .decisions({ bans, counts: [{ key: 'p|ip:192.0.2.1', value: null }], alerts: [], baselines: [], history: [] })()
      .catch((e: unknown) => e)) as Error;
    expect(error.message).toBe('Kafka refused WRITE on topic b.counts.v1 for principal User:aggregator (TOPIC_AUTHORIZATION_FAILED)');
    const unanswered = sends[1]![0]!.partition;
    expect(sends.map((s) => [...new Set(s.map((r) => r.topic))])).toEqual([[topics.bans, topics.counts], [topics.bans], [topics.bans], [topics.counts]]);
    expect(sends[2]).toEqual(sends[1]!.filter((r) => r.partition === unanswered));
  });
});

describe('Publisher and the ban history', () => {
  it("sends a ban's history record, and an expiry's, in the ban's or the tombstone's send", async () => {
    const history = { ...topics, history: 'b.ban-history.v1' };
    const place = KeyPartitioner();
    const sends: string[][] = [];
    const producer = {
      async sendBatch({ topicMessages }: { topicMessages: { topic: string; messages: { key: string }[] }[] }) {
        sends.push(topicMessages.flatMap(({ topic, messages }) => messages.map((m) => `${topic} ${m.key}`)));
        const answered = topicMessages.flatMap(({ topic, messages }) =>
          messages.map((message) => ({ topicName: topic, partition: place({ topic, partitionMetadata: [{}, {}, {}] as never, message: message as never }) })),
        );
        return answered;
      },
    };
    const renewable = { producer: producer as unknown as Producer, renew: async () => undefined } as unknown as RenewableProducer;
    const publisher = new Publisher(renewable, renewable, history, loadSchemaCatalog());
    const ban = (subject: string) => ({
      banId: `id-${subject}`,
      subject,
      policyId: 'p',
      reason: 'r',
      evidenceCount: 21,
      windowSeconds: 60,
      startedAt: 1_000,
      expiresAt: 61_000,
      preview: false,
      escalationLevel: 0,
      origin: 'aggregator',
      httpStatus: 403,
      createdBy: null,
      evidence: null,
    });
    const entry = (action: 'ban' | 'expire', subject: string) => ({ key: subject, value: { subject, action, at: 1_000, actor: null, ban: ban(subject) } });
    await publisher.decisions({
      bans: [
        { key: 'ip:192.0.2.1', value: ban('ip:192.0.2.1') },
        { key: 'ip:192.0.2.9', value: null },
      ],
      counts: [{ key: 'p|ip:192.0.2.1', value: null }],
      alerts: [],
      baselines: [],
      history: [entry('ban', 'ip:192.0.2.1'), entry('expire', 'ip:192.0.2.9')],
    })();
    expect(sends).toEqual([['b.bans.v1 ip:192.0.2.1', 'b.bans.v1 ip:192.0.2.9', 'b.ban-history.v1 ip:192.0.2.1', 'b.ban-history.v1 ip:192.0.2.9', 'b.counts.v1 p|ip:192.0.2.1']]);
  });
});
