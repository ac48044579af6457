import { createRequire } from 'node:module';

/**
 * kafkajs 2.2.4 runs one fetcher per broker. When the set of brokers changes (a dead one
 * fenced and gone from the metadata, or one back), a fetcher throws
 * KafkaJSFetcherRebalanceError and the fetch manager stops every fetcher, waiting for
 * each one's fetch in flight to end before it starts new fetchers for the new leaders
 * (consumer/fetchManager.js, fetcher.js). A fetch in flight is a long poll: it ends when
 * a record arrives on a partition it asked for, or after maxWaitTimeInMs (500 ms for the
 * aggregator and the compacted feeds). The partitions that moved are not among those it
 * asked for, so right after a broker's partitions moved, the consumer read nothing from
 * their new leaders for up to half a second: in the failover benchmark, the first floods'
 * bans reached the sidecars 0.3 to 0.5 s after they were written.
 *
 * kafkajs drops what such a fetch returns once its fetcher is stopped (fetcher.js reads
 * `isRunning` before it hands batches on), and the offsets it asked from are not moved
 * by a fetch, only by the batches processed, so the new fetchers ask for the same
 * records again. The fix: on a fetcher rebalance, stop() no longer waits for a fetcher
 * whose fetch is in flight (its answer is dropped when it comes); a fetcher handing
 * batches to the workers is waited for as before, so no partition is processed by two
 * fetchers at once. Any other stop (the consumer stopping, a crash) waits as before.
 *
 * fetchManager.js takes createFetcher when it is first loaded, so the replacement must
 * be in kafkajs's module cache before: installKafkaPatches() puts it there before any
 * client loads kafkajs; when kafkajs's consumer was loaded earlier, kafkajs's own stays.
 */

/** kafkajs's fetcher, as far as the patch uses it (src/consumer/fetcher.js). */
interface Fetcher {
  start(): Promise<void>;
  stop(): Promise<void>;
}
type FetcherOptions = { nodeId: number; partitionAssignments: object; fetch: (nodeId: number) => Promise<unknown[]> } & Record<string, unknown>;
type CreateFetcher = (options: FetcherOptions) => Fetcher;

const require = createRequire(import.meta.url);
export const FETCHER_MODULE = 'kafkajs/src/consumer/fetcher.js';
const FETCH_MANAGER_MODULE = 'kafkajs/src/consumer/fetchManager.js';
const ERRORS_MODULE = 'kafkajs/src/errors.js';
let fixed = false;

/** Installs the patched fetcher if kafkajs's fetch manager is not loaded yet; returns whether it is installed. */
export function fixKafkajsFetcherRebalance(): boolean {
  if (fixed) return true;
  if (require.cache[require.resolve(FETCH_MANAGER_MODULE)] !== undefined) return false;
  require(FETCHER_MODULE);
  const module = require.cache[require.resolve(FETCHER_MODULE)];
  if (module === undefined || typeof module.exports !== 'function') return false;
  // A plain Error subclass (no name of its own): fetchManager.js knows it by instanceof, and so does the patch.
  const { KafkaJSFetcherRebalanceError } = require(ERRORS_MODULE) as { KafkaJSFetcherRebalanceError?: new () => Error };
  if (typeof KafkaJSFetcherRebalanceError !== 'function') return false;
  module.exports = stopWithoutWaitingOnRebalance(module.exports as CreateFetcher, KafkaJSFetcherRebalanceError);
  fixed = true;
  return true;
}

/**
 * createFetcher whose stop() on a fetcher rebalance does not wait for a fetch in flight
 * (the unit test's fetcher too). The fetchers one createFetchers() makes share its
 * `partitionAssignments` map: the rebalance one of them met is known to all of them.
 */
export function stopWithoutWaitingOnRebalance(createFetcher: CreateFetcher, RebalanceError: new () => Error): CreateFetcher {
  const rebalancing = new WeakSet<object>();
  return (options) => {
    let fetching = 0;
    const fetcher = createFetcher({
      ...options,
      fetch: async (nodeId) => {
        fetching++;
        try {
          return await options.fetch(nodeId);
        } catch (error) {
          if (error instanceof RebalanceError) rebalancing.add(options.partitionAssignments);
          throw error;
        } finally {
          fetching--;
        }
      },
    });
    const stop = fetcher.stop.bind(fetcher);
    return {
      ...fetcher,
      stop: async () => {
        if (fetching > 0 && rebalancing.has(options.partitionAssignments)) {
          // Stopped now (no further fetch, its answer dropped); the end comes when the fetch does.
          void stop();
          return;
        }
        await stop();
      },
    };
  };
}

export function kafkajsFetcherRebalanceFixed(): boolean {
  return fixed;
}
