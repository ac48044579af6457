import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { settledRetries, unpatchedSendMessages } from './send-retry-fix.js';
import { answerAll, lockingEosManager, quietLogger } from './send.fakes.js';

const require = createRequire(import.meta.url);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A small seeded generator (a linear congruential one): the same scenarios every run. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

type Send = (input: object) => Promise<unknown>;
type SendFactory = (args: Record<string, unknown>) => Send;
type Attempt = (bail: unknown, retryCount: number, retryTime: number) => Promise<unknown>;
interface TopicData {
  topic: string;
  partitions: { partition: number }[];
}

/**
 * One send through kafkajs's own sendMessages, retrier and broker locks, with the early
 * attempts, against brokers and metadata drawn from `seed`: answers refused, "not the
 * leader", timed out, too large (kafkajs gives up), too few replicas, or slow; leaders
 * that move at refreshes; refreshes and metadata reads that throw. Returns the invariants
 * it saw broken (send-leader-watch.ts, send-retry-fix.ts).
 */
async function scenario(seed: number): Promise<{ violations: string[]; early: boolean }> {
  const random = prng(seed);
  const createRetry = require('kafkajs/src/retry/index.js');
  const { KafkaJSConnectionError, KafkaJSRequestTimeoutError } = require('kafkajs/src/errors.js');
  const { createErrorFromCode } = require('kafkajs/src/protocol/error.js');
  const violations: string[] = [];
  const retries = Math.floor(random() * 4);
  const retryTime = 5 + Math.floor(random() * 60);
  const pollMs = 3 + Math.floor(random() * 15);
  const partitions = 1 + Math.floor(random() * 3);
  let known = Array.from({ length: partitions }, () => 1 + Math.floor(random() * 3));
  let settled = false;
  let settledAt = 0;
  let inFlight = 0;
  let attemptsRunning = 0;
  let attempts = 0;
  const began = performance.now();
  const broker = (nodeId: number) => ({
    nodeId,
    produce: async ({ topicData }: { topicData: TopicData[] }) => {
      if (settled) violations.push('a request after the send settled');
      inFlight++;
      try {
        await sleep(Math.floor(random() * 3) === 0 ? Math.floor(random() * 40) : 0);
        const x = random();
        if (x < 0.25) throw new KafkaJSConnectionError('refused');
        if (x < 0.45) throw createErrorFromCode(6); // NOT_LEADER_FOR_PARTITION
        if (x < 0.5) throw new KafkaJSRequestTimeoutError('timed out');
        if (x < 0.53) throw createErrorFromCode(10); // MESSAGE_TOO_LARGE: kafkajs gives up
        if (x < 0.56) throw createErrorFromCode(19); // NOT_ENOUGH_REPLICAS: retried, says nothing of leaders
        return answerAll(topicData);
      } finally {
        inFlight--;
      }
    },
  });
  const cluster = {
    refreshMetadataIfNecessary: async () => {
      if (random() < 0.1) await sleep(5);
    },
    refreshMetadata: async () => {
      await sleep(Math.floor(random() * 5));
      if (random() < 0.1) throw new Error('refresh failed');
      known = known.map((leader) => (random() < 0.3 ? 1 + Math.floor(random() * 3) : leader));
    },
    addMultipleTargetTopics: async () => undefined,
    isConnected: () => true,
    removeBroker: () => undefined,
    findTopicPartitionMetadata: () => {
      if (random() < 0.05) throw new Error('Topic metadata not loaded');
      return known.map((leader, partitionId) => ({ partitionId, leader }));
    },
    findLeaderForPartitions: (_topic: string, ids: string[]) => {
      const led: Record<number, number[]> = {};
      for (const id of ids) (led[known[Number(id)]!] ??= []).push(Number(id));
      return led;
    },
    findBroker: async ({ nodeId }: { nodeId: string }) => broker(Number(nodeId)),
  };
  const eosManager = lockingEosManager();
  // kafkajs's send, each attempt watched (it runs inside the patch's retrier).
  const kafkajsSend = unpatchedSendMessages() as unknown as SendFactory;
  const watched: SendFactory = (args) =>
    kafkajsSend({
      ...args,
      retrier: (attempt: Attempt) =>
        (args.retrier as (a: Attempt) => Promise<unknown>)(async (bail, retryCount, time) => {
          attempts++;
          if (attemptsRunning > 0) violations.push(`retry ${retryCount} began while another attempt ran`);
          if (inFlight > 0) violations.push(`retry ${retryCount} began with ${inFlight} earlier requests in flight`);
          if (settled) violations.push('an attempt after the send settled');
          attemptsRunning++;
          try {
            return await attempt(bail, retryCount, time);
          } finally {
            attemptsRunning--;
          }
        }),
    });
  const send = (settledRetries(watched as unknown as Parameters<typeof settledRetries>[0], pollMs) as unknown as SendFactory)({
    logger: quietLogger,
    cluster,
    // Each message to its own partition: a send of several requests, one per leader.
    partitioner: ({ message }: { message: { partition: number } }) => message.partition,
    eosManager,
    retrier: createRetry({ initialRetryTime: retryTime, maxRetryTime: retryTime * 2, retries, factor: 0.2 }),
  });
  const messages = Array.from({ length: partitions }, (_, i) => ({ key: String(i), value: 'x', partition: i }));
  const done = send({ acks: -1, timeout: 1000, topicMessages: [{ topic: 'events', messages }] }).then(
    () => undefined,
    () => undefined,
  );
  const ended = await Promise.race([done.then(() => true), sleep(5_000).then(() => false)]);
  settled = true;
  settledAt = performance.now() - began;
  if (!ended) violations.push('the send never settled');
  // Anything the patch left behind would act within this.
  await sleep(200 + retryTime * 3);
  // kafkajs's attempts, and at most one early attempt per poll meanwhile.
  const bound = 2 * (retries + 1) + Math.ceil(settledAt / pollMs);
  if (attempts > bound) violations.push(`${attempts} attempts, more than ${bound}`);
  return { violations, early: attempts > retries + 1 };
}

describe('a send retried ahead of kafkajs’s backoff, fuzzed (fixed seeds)', () => {
  it('never overlaps attempts, never sends after it settles, never hangs, and keeps to its bound on attempts', async () => {
    const broken: { seed: number; violations: string[] }[] = [];
    let early = 0;
    for (let seed = 1; seed <= 300; seed += 20) {
      const results = await Promise.all(Array.from({ length: 20 }, (_, k) => scenario(seed + k).then((r) => ({ seed: seed + k, ...r }))));
      for (const r of results) {
        if (r.violations.length > 0) broken.push({ seed: r.seed, violations: r.violations });
        if (r.early) early++;
      }
    }
    expect(broken).toEqual([]);
    // The seeds reach the early attempts at all (a fuzz that never gets there shows nothing).
    expect(early).toBeGreaterThan(10);
  }, 60_000);
});
