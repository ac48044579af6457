import { describe, expect, it } from 'vitest';
import { KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError, type Consumer, type Kafka } from 'kafkajs';
import { CLIENT_RETRY, consumersRetryAsTheClient, producersAnswerWithin, subscribesToNewTopics } from './client.js';

/** A Kafka whose consumer() hands back the config it was given, with a subscribe that does nothing. */
function recordingKafka(): Kafka {
  return { consumer: (config: unknown) => ({ config, subscribe: async () => undefined }) } as unknown as Kafka;
}
const configOf = (consumer: Consumer) => (consumer as unknown as { config: unknown }).config;

describe('consumersRetryAsTheClient', () => {
  it("gives a consumer made without retry the client's, not kafkajs's 5 of its own", () => {
    const kafka = consumersRetryAsTheClient(recordingKafka());
    expect(configOf(kafka.consumer({ groupId: 'g' }))).toEqual({ groupId: 'g', retry: CLIENT_RETRY });
    expect(CLIENT_RETRY.retries).toBe(10);
  });

  it("keeps what a consumer's own retry says, the client's for the rest", () => {
    const kafka = consumersRetryAsTheClient(recordingKafka());
    expect(configOf(kafka.consumer({ groupId: 'g', retry: { retries: 2 } }))).toEqual({ groupId: 'g', retry: { ...CLIENT_RETRY, retries: 2 } });
  });
});

/** What a node that does not know a topic just created answers (kafkajs's own error for code 3). */
const unknownTopic = () => new KafkaJSProtocolError({ message: 'This server does not host this topic-partition', type: 'UNKNOWN_TOPIC_OR_PARTITION', code: 3, retriable: true } as never);

/** A consumer whose subscribe answers with the given outcomes in turn (undefined: subscribed); the last repeats. */
function consumerAnswering(outcomes: (Error | undefined)[]): { consumer: Consumer; calls: () => number } {
  let calls = 0;
  const consumer = {
    async subscribe() {
      const outcome = outcomes[Math.min(calls++, outcomes.length - 1)];
      if (outcome) throw outcome;
    },
  } as unknown as Consumer;
  return { consumer, calls: () => calls };
}

describe('subscribesToNewTopics', () => {
  it('subscribes once the node asked knows the topic, and after kafkajs ran out of its own retries on one', async () => {
    const exhausted = new KafkaJSNumberOfRetriesExceeded(unknownTopic(), { retryCount: 10, retryTime: 300 });
    const { consumer, calls } = consumerAnswering([unknownTopic(), exhausted, undefined]);
    await subscribesToNewTopics(consumer, 5_000, 1).subscribe({ topic: 't' });
    expect(calls()).toBe(3);
  });

  it('gives up at its bound with the last error', async () => {
    const { consumer } = consumerAnswering([unknownTopic()]);
    await expect(subscribesToNewTopics(consumer, 100, 10).subscribe({ topic: 't' })).rejects.toThrow('This server does not host this topic-partition');
  });

  it('fails at once on a refusal, which is not retriable', async () => {
    const refused = new KafkaJSProtocolError({ message: 'Not authorized to access topics', type: 'TOPIC_AUTHORIZATION_FAILED', code: 29, retriable: false } as never);
    const { consumer, calls } = consumerAnswering([refused]);
    await expect(subscribesToNewTopics(consumer, 5_000, 1).subscribe({ topic: 't' })).rejects.toThrow('Not authorized');
    expect(calls()).toBe(1);
  });
});

describe('producersAnswerWithin', () => {
  /** A Kafka whose producers' send and sendBatch hand back what they were given. */
  const echoing = () => ({ producer: () => ({ send: async (r: unknown) => r, sendBatch: async (b: unknown) => b }) }) as unknown as Kafka;

  it("asks the broker to answer a send before the client's request timeout would close the connection", async () => {
    const producer = producersAnswerWithin(5_000, echoing()).producer();
    expect(await producer.send({ topic: 't', messages: [] })).toEqual({ timeout: 4_000, topic: 't', messages: [] });
    expect(await producer.sendBatch({ topicMessages: [] })).toEqual({ timeout: 4_000, topicMessages: [] });
    expect(await producersAnswerWithin(500, echoing()).producer().send({ topic: 't', messages: [] })).toMatchObject({ timeout: 400 });
  });

  it('keeps the timeout a send names', async () => {
    expect(await producersAnswerWithin(5_000, echoing()).producer().send({ topic: 't', messages: [], timeout: 1_234 })).toMatchObject({ timeout: 1_234 });
  });
});
