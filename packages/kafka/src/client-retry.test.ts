import { describe, expect, it } from 'vitest';
import type { Kafka } from 'kafkajs';
import { CLIENT_RETRY, consumersRetryAsTheClient } from './client.js';

/** A Kafka whose consumer() hands back the config it was given. */
function recordingKafka(): Kafka {
  return { consumer: (config: unknown) => config } as unknown as Kafka;
}

describe('consumersRetryAsTheClient', () => {
  it("gives a consumer made without retry the client's, not kafkajs's 5 of its own", () => {
    const kafka = consumersRetryAsTheClient(recordingKafka());
    expect(kafka.consumer({ groupId: 'g' })).toEqual({ groupId: 'g', retry: CLIENT_RETRY });
    expect(CLIENT_RETRY.retries).toBe(10);
  });

  it("keeps what a consumer's own retry says, the client's for the rest", () => {
    const kafka = consumersRetryAsTheClient(recordingKafka());
    expect(kafka.consumer({ groupId: 'g', retry: { retries: 2 } })).toEqual({ groupId: 'g', retry: { ...CLIENT_RETRY, retries: 2 } });
  });
});
