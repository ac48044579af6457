import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { settledRetries, unpatchedSendMessages } from './send-retry-fix.js';
import { leadersOf, watchLeaders } from './send-leader-watch.js';
import { answerAll, lockingEosManager, onePartitionCluster, quietLogger } from './send.fakes.js';

const require = createRequire(import.meta.url);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Partition {
  partition: number;
  messages: unknown[];
}

/**
 * kafkajs 2.2.4's own send (with its own retrier) over one partition. `refuses(broker)`
 * says whether a produce to that broker fails with a connection error (true: a dead
 * broker) or is answered that it does not lead the partition ('not the leader');
 * `elect(refreshes)` gives the leader a metadata refresh finds, by how many came before.
 */
function oneSend(options: {
  createSendMessages: (args: object) => unknown;
  refuses: (broker: number) => boolean | 'not the leader';
  elect: (refreshes: number) => number;
  initialRetryTime: number;
  retries: number;
}) {
  const createRetry = require('kafkajs/src/retry/index.js');
  const { KafkaJSConnectionError } = require('kafkajs/src/errors.js');
  const { createErrorFromCode } = require('kafkajs/src/protocol/error.js');
  const attempts: { broker: number; at: number }[] = [];
  const began = performance.now();
  let refreshes = 0;
  const broker = (nodeId: number) => ({
    nodeId,
    produce: async ({ topicData }: { topicData: { topic: string; partitions: Partition[] }[] }) => {
      attempts.push({ broker: nodeId, at: performance.now() - began });
      const refused = options.refuses(nodeId);
      if (refused === 'not the leader') throw createErrorFromCode(6);
      if (refused) throw new KafkaJSConnectionError('connection refused');
      return answerAll(topicData);
    },
  });
  const cluster = onePartitionCluster(options.elect(0), () => options.elect(++refreshes), broker);
  const eosManager = lockingEosManager();
  const send = (options.createSendMessages as (args: object) => (input: object) => Promise<unknown>)({
    logger: quietLogger,
    cluster,
    partitioner: () => 0,
    eosManager,
    retrier: createRetry({ initialRetryTime: options.initialRetryTime, maxRetryTime: options.initialRetryTime, retries: options.retries }),
  });
  const result = send({ acks: -1, timeout: 30_000, topicMessages: [{ topic: 'events', messages: [{ key: 'a', value: 'x' }] }] });
  return { result, attempts, elapsed: () => performance.now() - began, refreshes: () => refreshes };
}

const patched = (pollMs = 20) => settledRetries(unpatchedSendMessages(), pollMs) as unknown as (args: object) => unknown;
/** The send-retry patch with a watch that never asks again: the retry after kafkajs's backoff alone. */
const withoutWatch = () => patched(3_600_000);

describe('a failed send retried as soon as its partition has another leader', () => {
  // Broker 2 is dead; Kafka names broker 1 50 ms after the send's first attempt.
  const failover = (createSendMessages: (args: object) => unknown) => {
    const start = performance.now();
    return oneSend({ createSendMessages, refuses: (b) => b === 2, elect: () => (performance.now() - start > 50 ? 1 : 2), initialRetryTime: 1_500, retries: 3 });
  };

  it("without the watch, waits out kafkajs's backoff before writing to the new leader (what the watch is for)", async () => {
    const send = failover(withoutWatch());
    await send.result;
    expect(send.attempts.map((a) => a.broker)).toEqual([2, 1]);
    expect(send.attempts[1]!.at).toBeGreaterThan(1_000);
  });

  it('with the watch, writes to the new leader once the metadata names it, long before the backoff ends', async () => {
    const send = failover(patched());
    await send.result;
    expect(send.attempts.map((a) => a.broker)).toEqual([2, 1]);
    expect(send.elapsed()).toBeLessThan(700);
    // kafkajs's own timer fires later and collects the same result: no third request.
    await sleep(1_900);
    expect(send.attempts.map((a) => a.broker)).toEqual([2, 1]);
  });

  it('tries the new leader again soon when it answers that it does not lead the partition yet (the election not yet applied there)', async () => {
    const start = performance.now();
    const leads = () => performance.now() - start > 50;
    const send = oneSend({
      createSendMessages: patched(),
      refuses: (b) => (b === 2 ? true : leads() && performance.now() - start > 150 ? false : 'not the leader'),
      elect: () => (leads() ? 1 : 2),
      initialRetryTime: 1_500,
      retries: 3,
    });
    await send.result;
    const brokers = send.attempts.map((a) => a.broker);
    expect(brokers[0]).toBe(2);
    expect(brokers.slice(1).every((b) => b === 1)).toBe(true);
    expect(brokers.length).toBeGreaterThan(2);
    expect(send.elapsed()).toBeLessThan(700);
    await sleep(1_900);
    // Every try after the first filled kafkajs's first retry: its timer made no request of its own.
    expect(send.attempts.map((a) => a.broker)).toEqual(brokers);
  });

  it("waits for kafkajs's backoff when no leader moves (a broker refusing for a moment)", async () => {
    let refused = 0;
    const send = oneSend({ createSendMessages: patched(), refuses: () => refused++ < 1, elect: () => 2, initialRetryTime: 400, retries: 3 });
    await send.result;
    expect(send.attempts.map((a) => a.broker)).toEqual([2, 2]);
    expect(send.attempts[1]!.at).toBeGreaterThan(300);
    // It asked for the metadata meanwhile, every 20 ms: no more than the wait allows.
    expect(send.refreshes()).toBeGreaterThan(3);
    expect(send.refreshes()).toBeLessThan(30);
  });

  it("gives up when kafkajs's retries run out, with at most one early attempt a poll: leaders moving all the time, every broker refusing", async () => {
    const send = oneSend({ createSendMessages: patched(), refuses: () => true, elect: (n) => 1 + (n % 2), initialRetryTime: 200, retries: 3 });
    await expect(send.result).rejects.toThrow(/connection refused/);
    // kafkajs's 4 attempts and about 600 ms of backoff: early ones at most 20 ms apart.
    expect(send.attempts.length).toBeGreaterThan(4);
    expect(send.attempts.length).toBeLessThanOrEqual(4 + Math.ceil(send.elapsed() / 20));
    const count = send.attempts.length;
    // No attempt after the send has failed.
    await sleep(500);
    expect(send.attempts).toHaveLength(count);
  });
});

describe('watchLeaders', () => {
  const cluster = (leader: () => number) => ({
    refreshMetadata: async () => undefined,
    findTopicPartitionMetadata: (topic: string) =>
      topic === 'a'
        ? [{ partitionId: 0, leader: leader() }]
        : [
            { partitionId: 0, leader: 7 },
            { partitionId: 1, leader: 8 },
          ],
  });

  it('names every partition of every topic, and nothing for a cluster it cannot read', () => {
    expect(
      leadersOf(
        cluster(() => 3),
        ['a', 'b'],
      ),
    ).toBe('0:3;0:7,1:8');
    expect(leadersOf({}, ['a'])).toBeUndefined();
    expect(
      leadersOf(
        {
          refreshMetadata: async () => undefined,
          findTopicPartitionMetadata: () => {
            throw new Error('Topic metadata not loaded');
          },
        },
        ['a'],
      ),
    ).toBeUndefined();
  });

  it('calls back once when a leader changes, and never once stopped', async () => {
    let leader = 3;
    let moved = 0;
    watchLeaders(
      cluster(() => leader),
      ['a'],
      '0:3',
      () => moved++,
      5,
    );
    await sleep(30);
    expect(moved).toBe(0);
    leader = 4;
    await sleep(30);
    leader = 5;
    await sleep(30);
    expect(moved).toBe(1);
    let movedAfterStop = 0;
    const stop = watchLeaders(
      cluster(() => leader),
      ['a'],
      '0:5',
      () => movedAfterStop++,
      5,
    );
    stop();
    leader = 6;
    await sleep(30);
    expect(movedAfterStop).toBe(0);
  });
});
