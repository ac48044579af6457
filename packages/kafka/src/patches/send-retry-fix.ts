import { createRequire } from 'node:module';

/**
 * kafkajs 2.2.4's send (producer/sendMessages.js) sends one request per leader and
 * fails an attempt as soon as one of them fails, while the others may still be on their
 * way; the retry then sends again to every broker that has not answered yet, the slow
 * one included. That second request waits for the first behind the broker's lock, then
 * takes the next sequence numbers, so the broker cannot take it for a copy and writes
 * the records again: once per retry (one broker refused, another slow, as in a broker
 * failover; 4 copies for 3 refusals in send-retry-duplicates.test.ts). Copies count twice
 * in the aggregator's windows.
 *
 * The fix: a retry first waits until every request of the producer's earlier attempts
 * has settled (its answer is then known, and that broker is not sent to again). Requests
 * are followed through the producer's broker lock, taken and released around each one.
 * The first attempt never waits, so sends of one producer still overlap. Applied once
 * per process by installKafkaPatches(), before kafkajs's producer is loaded.
 */

type SendFactory = (args: SendArgs) => unknown;
interface BrokerLocks {
  acquireBrokerLock(broker: unknown): Promise<void>;
  releaseBrokerLock(broker: unknown): Promise<void> | void;
}
interface SendArgs {
  eosManager: BrokerLocks;
  retrier: (attempt: (bail: unknown, retryCount: number, retryTime: number) => Promise<unknown>) => Promise<unknown>;
  [other: string]: unknown;
}

const require = createRequire(import.meta.url);
export const SEND_MESSAGES_MODULE = 'kafkajs/src/producer/sendMessages.js';
const PRODUCER_MODULE = 'kafkajs/src/producer/messageProducer.js';
let original: SendFactory | undefined;

/** Wraps kafkajs's send factory if its producer is not loaded yet; returns whether the wrapped one is in place. */
export function fixKafkajsSendRetries(): boolean {
  if (original !== undefined) return true;
  if (require.cache[require.resolve(PRODUCER_MODULE)] !== undefined) return false;
  const factory = require(SEND_MESSAGES_MODULE) as unknown;
  const module = require.cache[require.resolve(SEND_MESSAGES_MODULE)];
  if (module === undefined || typeof factory !== 'function') return false;
  original = factory as SendFactory;
  module.exports = settledRetries(original);
  return true;
}

/** kafkajs's own send factory, as it was before the fix (for the test that shows the copies). */
export function unpatchedSendMessages(): SendFactory {
  return original ?? (require(SEND_MESSAGES_MODULE) as SendFactory);
}

/** The fix on any factory with sendMessages's arguments (its unit test's too). */
export function settledRetries(factory: SendFactory): SendFactory {
  return (args) => {
    const { eosManager, retrier } = args;
    /** Requests between taking a broker's lock and letting it go. */
    let inFlight = 0;
    let idle: (() => void)[] = [];
    const locks: BrokerLocks = Object.create(eosManager as object) as BrokerLocks;
    locks.acquireBrokerLock = async (broker) => {
      inFlight++;
      try {
        await eosManager.acquireBrokerLock.call(eosManager, broker);
      } catch (error) {
        // kafkajs lets go only of a lock it took.
        settle();
        throw error;
      }
    };
    locks.releaseBrokerLock = async (broker) => {
      try {
        await eosManager.releaseBrokerLock.call(eosManager, broker);
      } finally {
        settle();
      }
    };
    const settle = () => {
      if (--inFlight > 0) return;
      const waiting = idle;
      idle = [];
      for (const wake of waiting) wake();
    };
    const settled = () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((wake) => idle.push(wake)));
    return factory({
      ...args,
      eosManager: locks,
      retrier: (attempt) =>
        retrier(async (bail, retryCount, retryTime) => {
          if (retryCount > 0) await settled();
          return attempt(bail, retryCount, retryTime);
        }),
    });
  };
}
