import { describe, expect, it } from 'vitest';
import { KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError, type Admin } from 'kafkajs';
import { waitForTopicLeaders } from './topic-admin.js';

/** A node that does not know a topic just created yet answers this (kafkajs's own error for code 3). */
const unknownTopic = () => new KafkaJSProtocolError({ message: 'This server does not host this topic-partition', type: 'UNKNOWN_TOPIC_OR_PARTITION', code: 3, retriable: true } as never);

/** An admin whose metadata answers are the given ones, in turn; the last repeats. */
function adminAnswering(answers: (Error | number)[]): { admin: Admin; calls: () => number } {
  let calls = 0;
  const admin = {
    async fetchTopicMetadata({ topics }: { topics: string[] }) {
      const answer = answers[Math.min(calls++, answers.length - 1)]!;
      if (answer instanceof Error) throw answer;
      return { topics: topics.map((name) => ({ name, partitions: [{ partitionId: 0, leader: answer, replicas: [1], isr: [1] }] })) };
    },
  } as unknown as Admin;
  return { admin, calls: () => calls };
}

describe('waitForTopicLeaders', () => {
  it('retries a node that does not know the topic yet, then a partition without a leader, until led', async () => {
    // The second: kafkajs's own retries ran out on a retriable error (LEADER_NOT_AVAILABLE past its short budget).
    const exhausted = new KafkaJSNumberOfRetriesExceeded(unknownTopic(), { retryCount: 10, retryTime: 300 });
    const { admin, calls } = adminAnswering([unknownTopic(), exhausted, -1, 2]);
    await waitForTopicLeaders(admin, ['t'], 5_000);
    expect(calls()).toBe(4);
  });

  it('gives up at its bound with the topics still unknown', async () => {
    const { admin } = adminAnswering([unknownTopic()]);
    await expect(waitForTopicLeaders(admin, ['t'], 250)).rejects.toThrow('This server does not host this topic-partition');
  });

  it('gives up at its bound with a partition still without a leader, naming the topic', async () => {
    const { admin } = adminAnswering([-1]);
    await expect(waitForTopicLeaders(admin, ['t'], 250)).rejects.toThrow('topics still without a leader after 250 ms: t');
  });

  it('throws an error that is not retriable at once', async () => {
    const { admin, calls } = adminAnswering([new KafkaJSProtocolError({ message: 'denied', type: 'TOPIC_AUTHORIZATION_FAILED', code: 29, retriable: false } as never)]);
    await expect(waitForTopicLeaders(admin, ['t'], 5_000)).rejects.toThrow('denied');
    expect(calls()).toBe(1);
  });
});
