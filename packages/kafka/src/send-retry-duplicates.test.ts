import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { answerAll, lockingEosManager, onePartitionCluster, quietLogger } from './patches/send.fakes.js';
import { fixKafkajsSendRetries, settledRetries, unpatchedSendMessages } from './patches/send-retry-fix.js';

const require = createRequire(import.meta.url);

interface Partition {
  partition: number;
  firstSequence: number;
  messages: unknown[];
}
interface TopicData {
  topic: string;
  partitions: Partition[];
}

/**
 * kafkajs 2.2.4's own send (producer/sendMessages.js) with the sequence bookkeeping of its
 * idempotent producer (eosManager: a sequence per partition, taken under a lock per broker,
 * given back when a request fails) and two brokers: broker 2 refuses the first `refusals`
 * attempts at once (a dead broker: connection refused), broker 1 answers after `slowMs`
 * (a leader waiting, acks all, for its in-sync replicas). Returns what each broker appended.
 */
async function sendThroughKafkajs(refusals: number, slowMs: number, createSendMessages: (args: object) => unknown): Promise<{ broker: number; partition: number; firstSequence: number }[]> {
  const { send, appended } = producerSend(refusals, slowMs, createSendMessages);
  await send([
    { partition: 0, key: 'a', value: 'x' },
    { partition: 1, key: 'b', value: 'y' },
  ]);
  // Requests the send no longer waits for may still be queued behind broker 1's lock.
  await new Promise((r) => setTimeout(r, slowMs * (refusals + 2)));
  return appended;
}

/** The send function of one producer over the two brokers above (kafkajs makes one per producer), and what the brokers appended. */
function producerSend(refusals: number, slowMs: number, createSendMessages: (args: object) => unknown) {
  const createRetry = require('kafkajs/src/retry/index.js');
  const { KafkaJSConnectionError } = require('kafkajs/src/errors.js');
  const eosManager = lockingEosManager();
  const appended: { broker: number; partition: number; firstSequence: number }[] = [];
  const answer = (nodeId: number, topicData: TopicData[]) => {
    for (const t of topicData) for (const p of t.partitions) appended.push({ broker: nodeId, partition: p.partition, firstSequence: p.firstSequence });
    return answerAll(topicData);
  };
  let refused = 0;
  const brokers = new Map([
    [1, { nodeId: 1, produce: async ({ topicData }: { topicData: TopicData[] }) => (await new Promise((r) => setTimeout(r, slowMs)), answer(1, topicData)) }],
    [
      2,
      {
        nodeId: 2,
        produce: async ({ topicData }: { topicData: TopicData[] }) => {
          if (refused++ < refusals) throw new KafkaJSConnectionError('connection refused');
          return answer(2, topicData);
        },
      },
    ],
  ]);
  const cluster = {
    refreshMetadataIfNecessary: async () => undefined,
    refreshMetadata: async () => undefined,
    addMultipleTargetTopics: async () => undefined,
    isConnected: () => true,
    removeBroker: () => undefined,
    findTopicPartitionMetadata: () => [
      { partitionId: 0, leader: 1 },
      { partitionId: 1, leader: 2 },
    ],
    findLeaderForPartitions: (_topic: string, partitions: string[]) => {
      // Partition 0 is led by broker 1, partition 1 by broker 2; a broker leading none of them gets no request.
      const led: Record<number, number[]> = {};
      for (const p of partitions.map(Number)) (led[p === 0 ? 1 : 2] ??= []).push(p);
      return led;
    },
    findBroker: async ({ nodeId }: { nodeId: string }) => brokers.get(Number(nodeId)),
  };
  const send = (createSendMessages as (args: object) => (input: object) => Promise<unknown>)({
    logger: quietLogger,
    cluster,
    partitioner: ({ message }: { message: { partition: number } }) => message.partition,
    eosManager,
    retrier: createRetry({ initialRetryTime: 20, retries: 10 }),
  });
  return {
    appended,
    send: (messages: { partition: number; key: string; value: string }[]) => send({ acks: -1, timeout: 30_000, topicMessages: [{ topic: 'events', messages }] }),
  };
}

/**
 * kafkajs 2.2.4's own send over one partition whose leader, broker 2, is dead (connection
 * refused). Kafka elects broker 1 while the send waits out the backoff after its first
 * failed attempt, whose refresh (kafkajs refreshes when an attempt fails) still named
 * broker 2. Returns the broker of each attempt.
 */
async function attemptsAcrossElection(createSendMessages: (args: object) => unknown): Promise<number[]> {
  const createRetry = require('kafkajs/src/retry/index.js');
  const { KafkaJSConnectionError } = require('kafkajs/src/errors.js');
  const attempts: number[] = [];
  let leader = 2;
  let refreshes = 0;
  const broker = (nodeId: number) => ({
    nodeId,
    produce: async ({ topicData }: { topicData: TopicData[] }) => {
      attempts.push(nodeId);
      if (nodeId === 2) throw new KafkaJSConnectionError('connection refused');
      return answerAll(topicData);
    },
  });
  const cluster = onePartitionCluster(
    leader,
    () => {
      const known = leader;
      // The refresh after the first failure is the last that sees broker 2: the election follows it.
      if (++refreshes === 1) setTimeout(() => (leader = 1), 5);
      return known;
    },
    broker,
  );
  const eosManager = lockingEosManager();
  const send = (createSendMessages as (args: object) => (input: object) => Promise<unknown>)({
    logger: quietLogger,
    cluster,
    partitioner: () => 0,
    eosManager,
    retrier: createRetry({ initialRetryTime: 50, retries: 5 }),
  });
  await send({ acks: -1, timeout: 30_000, topicMessages: [{ topic: 'events', messages: [{ key: 'a', value: 'x' }] }] });
  return attempts;
}

type SendFactory = Parameters<typeof settledRetries>[0];
const kafkajsOwn = () => unpatchedSendMessages() as unknown as (args: object) => unknown;
const patched = () => settledRetries(unpatchedSendMessages()) as unknown as (args: object) => unknown;

describe('kafkajs 2.2.4 idempotent send, retried while a request is in flight', () => {
  it('writes a record once per retry without the patch (what the patch is for)', async () => {
    const appended = await sendThroughKafkajs(3, 300, kafkajsOwn());
    expect(appended.filter((a) => a.partition === 0).length).toBeGreaterThan(1);
  });

  it('writes each record once with the patch when one broker refuses a few attempts and another answers slowly', async () => {
    const appended = await sendThroughKafkajs(3, 300, patched());
    expect(appended.filter((a) => a.partition === 0)).toHaveLength(1);
    expect(appended.filter((a) => a.partition === 1)).toHaveLength(1);
  });

  it('writes each record once when no retry happens while a request is in flight', async () => {
    const appended = await sendThroughKafkajs(0, 50, patched());
    expect(appended.map((a) => a.partition).sort()).toEqual([0, 1]);
  });

  it("keeps each send's wait to its own requests: a send retried while another send's request is slow does not wait for it", async () => {
    // One producer: send A goes to broker 1 alone (answers after 600 ms); send B to broker 2
    // alone, refused once. B's retry has nothing of its own in flight, so it ends first; a
    // wait for every request of the producer would hold it until A's answer.
    const { send } = producerSend(1, 600, patched());
    const ended: string[] = [];
    const a = send([{ partition: 0, key: 'a', value: 'x' }]).then(() => ended.push('A'));
    await new Promise((r) => setTimeout(r, 20));
    const b = send([{ partition: 1, key: 'b', value: 'y' }]).then(() => ended.push('B'));
    await Promise.all([a, b]);
    expect(ended).toEqual(['B', 'A']);
  });

  it('without the patch, sends its retry by the refresh from before the election: the dead leader once more (what the patch is for)', async () => {
    expect(await attemptsAcrossElection(kafkajsOwn())).toEqual([2, 2, 1]);
  });

  it('with the patch, asks for the metadata again just before the retry: it goes to the new leader at once', async () => {
    expect(await attemptsAcrossElection(patched())).toEqual([2, 1]);
  });

  it('is what installKafkaPatches puts in kafkajs’s module cache', () => {
    expect(fixKafkajsSendRetries()).toBe(true);
    const inCache = require('kafkajs/src/producer/sendMessages.js') as SendFactory;
    expect(inCache).not.toBe(unpatchedSendMessages());
  });
});
