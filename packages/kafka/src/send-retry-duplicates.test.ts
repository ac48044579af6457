import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

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
async function sendThroughKafkajs(refusals: number, slowMs: number) {
  const createSendMessages = require('kafkajs/src/producer/sendMessages.js');
  const createRetry = require('kafkajs/src/retry/index.js');
  const Lock = require('kafkajs/src/utils/lock.js');
  const { KafkaJSConnectionError } = require('kafkajs/src/errors.js');
  const sequence = new Map<string, number>();
  const locks = new Map<number, { acquire(): Promise<void>; release(): void }>();
  const eosManager = {
    isTransactional: () => false,
    getSequence: (t: string, p: number) => sequence.get(`${t}/${p}`) ?? 0,
    updateSequence: (t: string, p: number, n: number) => void sequence.set(`${t}/${p}`, (sequence.get(`${t}/${p}`) ?? 0) + n),
    getProducerId: () => 1,
    getProducerEpoch: () => 0,
    getTransactionalId: () => undefined,
    acquireBrokerLock: async (b: { nodeId: number }) => {
      if (!locks.has(b.nodeId)) locks.set(b.nodeId, new Lock({ timeout: 0xffff }));
      await locks.get(b.nodeId)!.acquire();
    },
    releaseBrokerLock: (b: { nodeId: number }) => locks.get(b.nodeId)!.release(),
  };
  const appended: { broker: number; partition: number; firstSequence: number }[] = [];
  const answer = (nodeId: number, topicData: TopicData[]) => {
    for (const t of topicData) for (const p of t.partitions) appended.push({ broker: nodeId, partition: p.partition, firstSequence: p.firstSequence });
    return { topics: topicData.map((t) => ({ topicName: t.topic, partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode: 0, baseOffset: '0' })) })) };
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
    findLeaderForPartitions: (_topic: string, partitions: string[]) => ({ 1: partitions.filter((p) => Number(p) === 0).map(Number), 2: partitions.filter((p) => Number(p) === 1).map(Number) }),
    findBroker: async ({ nodeId }: { nodeId: string }) => brokers.get(Number(nodeId)),
  };
  const logger = { debug() {}, info() {}, warn() {}, error() {} };
  const send = createSendMessages({
    logger,
    cluster,
    partitioner: ({ message }: { message: { partition: number } }) => message.partition,
    eosManager,
    retrier: createRetry({ initialRetryTime: 20, retries: 10 }),
  });
  await send({
    acks: -1,
    timeout: 30_000,
    topicMessages: [
      {
        topic: 'events',
        messages: [
          { partition: 0, key: 'a', value: 'x' },
          { partition: 1, key: 'b', value: 'y' },
        ],
      },
    ],
  });
  // Requests the send no longer waits for may still be queued behind broker 1's lock.
  await new Promise((r) => setTimeout(r, slowMs * (refusals + 2)));
  return appended;
}

describe('kafkajs 2.2.4 idempotent send, retried while a request is in flight', () => {
  // Not fixed: while broker 1's answer is slow, each retry caused by broker 2 queues another
  // request to broker 1 (its answer not in yet), with the next sequence numbers, so the
  // broker cannot take it for a copy: the record is written once per retry (4 times with 3
  // refusals). `.fails` keeps this visible: drop it when a patch makes the test pass.
  it.fails('writes each record once when one broker refuses a few attempts and another answers slowly', async () => {
    const appended = await sendThroughKafkajs(3, 300);
    expect(appended.filter((a) => a.partition === 0)).toHaveLength(1);
  });

  it('writes each record once when no retry happens while a request is in flight', async () => {
    const appended = await sendThroughKafkajs(0, 50);
    expect(appended.map((a) => a.partition).sort()).toEqual([0, 1]);
  });
});
