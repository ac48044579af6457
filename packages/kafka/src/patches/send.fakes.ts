import { createRequire } from 'node:module';

/**
 * Stand-ins around kafkajs 2.2.4's own send (producer/sendMessages.js) for the unit tests
 * of the send patches: what its producer hands the send besides the brokers. Test-only
 * (packages/kafka/tsconfig.json leaves *.fakes.ts out of the build).
 */

const require = createRequire(import.meta.url);

interface TopicData {
  topic: string;
  partitions: { partition: number }[];
}

export const quietLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** A broker's answer that takes every partition of the request. */
export function answerAll(topicData: readonly TopicData[]) {
  return { topics: topicData.map((t) => ({ topicName: t.topic, partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode: 0, baseOffset: '0' })) })) };
}

/** An idempotent producer's bookkeeping: a sequence per partition and kafkajs's own lock per broker, as its eosManager keeps them. */
export function lockingEosManager() {
  const Lock = require('kafkajs/src/utils/lock.js');
  const sequence = new Map<string, number>();
  const locks = new Map<number, { acquire(): Promise<void>; release(): void }>();
  return {
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
}

/**
 * A cluster of one partition: its leader is `first` until a metadata refresh, then what
 * `refresh` returns at each; `broker` makes the broker of a node id.
 */
export function onePartitionCluster(first: number, refresh: () => number, broker: (nodeId: number) => unknown) {
  let known = first;
  return {
    refreshMetadataIfNecessary: async () => undefined,
    refreshMetadata: async () => {
      known = refresh();
    },
    addMultipleTargetTopics: async () => undefined,
    isConnected: () => true,
    removeBroker: () => undefined,
    findTopicPartitionMetadata: () => [{ partitionId: 0, leader: known }],
    findLeaderForPartitions: () => ({ [known]: [0] }),
    findBroker: async ({ nodeId }: { nodeId: string }) => broker(Number(nodeId)),
  };
}
