import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { fixKafkajsFetcherRebalance, stopWithoutWaitingOnRebalance } from './fetcher-rebalance-fix.js';
import { kafkajsOwn } from './kafkajs-own.js';

const require = createRequire(import.meta.url);
type CreateFetcher = Parameters<typeof stopWithoutWaitingOnRebalance>[0];
// kafkajs's own fetcher, read from its source file whatever the module cache holds.
const kafkajsFetcher = kafkajsOwn<CreateFetcher>('kafkajs/src/consumer/fetcher.js');
const { KafkaJSFetcherRebalanceError } = require('kafkajs/src/errors.js') as { KafkaJSFetcherRebalanceError: new () => Error };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Two fetchers as kafkajs's fetch manager makes them: node 1's fetch is a long poll that
 * answers only when released, node 2's throws the rebalance error kafkajs throws when the
 * brokers changed. After the error, both are stopped as fetchManager.start does; says
 * whether that stop was over before node 1's poll answered, and what node 1 handed on.
 */
async function rebalanceWith(createFetcher: CreateFetcher) {
  const partitionAssignments = new Map();
  const handed: unknown[] = [];
  let answer: () => void = () => undefined;
  const answered = new Promise<void>((r) => (answer = r));
  const workerQueue = { push: async (...batches: unknown[]) => void handed.push(...batches) };
  const logger = { namespace: () => ({ debug() {}, info() {}, warn() {}, error() {} }) };
  const poll = createFetcher({ nodeId: 1, workerQueue, partitionAssignments, logger, fetch: async () => (await answered, [{ topic: 't', partition: 0 }]) });
  const moved = createFetcher({
    nodeId: 2,
    workerQueue,
    partitionAssignments,
    logger,
    fetch: async () => {
      await sleep(10);
      throw new KafkaJSFetcherRebalanceError();
    },
  });
  await expect(Promise.all([poll.start(), moved.start()])).rejects.toThrow(KafkaJSFetcherRebalanceError);
  const stopping = Promise.all([poll.stop(), moved.stop()]).then(() => 'stopped' as const);
  const beforeAnswer = await Promise.race([stopping, sleep(500).then(() => 'still waiting' as const)]);
  answer();
  await stopping;
  await sleep(20);
  return { beforeAnswer, handed };
}

describe('fixKafkajsFetcherRebalance', () => {
  it('installs into kafkajs before its fetch manager is loaded, or says it could not', () => {
    const loaded = require.cache[require.resolve('kafkajs/src/consumer/fetchManager.js')] !== undefined;
    expect(fixKafkajsFetcherRebalance()).toBe(!loaded || fixKafkajsFetcherRebalance());
  });

  it("kafkajs's own fetcher makes a rebalance wait out the other fetchers' long polls (the case the patch exists for)", async () => {
    expect((await rebalanceWith(kafkajsFetcher)).beforeAnswer).toBe('still waiting');
  });

  it('patched, a rebalance does not wait for a fetch in flight, and what that fetch returns is dropped, not handed on', async () => {
    const { beforeAnswer, handed } = await rebalanceWith(stopWithoutWaitingOnRebalance(kafkajsFetcher, KafkaJSFetcherRebalanceError));
    expect(beforeAnswer).toBe('stopped');
    expect(handed).toEqual([]);
  });

  it('any other stop (the consumer stopping) still waits for the fetch in flight', async () => {
    const fetcher = stopWithoutWaitingOnRebalance(
      kafkajsFetcher,
      KafkaJSFetcherRebalanceError,
    )({
      nodeId: 1,
      workerQueue: { push: async () => undefined },
      partitionAssignments: new Map(),
      logger: { namespace: () => ({ debug() {}, info() {} }) },
      fetch: async () => (await sleep(300), []),
    });
    void fetcher.start();
    await sleep(20);
    const began = performance.now();
    await fetcher.stop();
    expect(performance.now() - began).toBeGreaterThan(200);
  });

  it('a rebalance still waits for a fetcher handing batches to the workers: no partition is processed by two fetchers at once', async () => {
    const partitionAssignments = new Map();
    let releaseWorker: () => void = () => undefined;
    const working = new Promise<void>((r) => (releaseWorker = r));
    const logger = { namespace: () => ({ debug() {}, info() {} }) };
    const create = stopWithoutWaitingOnRebalance(kafkajsFetcher, KafkaJSFetcherRebalanceError);
    let first = true;
    const busy = create({
      nodeId: 1,
      partitionAssignments,
      logger,
      workerQueue: { push: () => working },
      fetch: async () => {
        if (!first) return (await sleep(1_000), []);
        first = false;
        return [{ topic: 't', partition: 0 }];
      },
    });
    const moved = create({
      nodeId: 2,
      partitionAssignments,
      logger,
      workerQueue: { push: async () => undefined },
      fetch: async () => (await sleep(10), Promise.reject(new KafkaJSFetcherRebalanceError())),
    });
    await expect(Promise.all([busy.start(), moved.start()])).rejects.toThrow(KafkaJSFetcherRebalanceError);
    let stopped = false;
    const stopping = Promise.all([busy.stop(), moved.stop()]).then(() => (stopped = true));
    await sleep(100);
    expect(stopped, 'waits while the batch is processed').toBe(false);
    releaseWorker();
    await stopping;
    expect(stopped).toBe(true);
  });
});
