import { createRequire } from 'node:module';
import { aheadOfBackoff, type LeaderFailure, leaderLists, SEND_LEADER_POLL_MS } from './send-leader-watch.js';

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
 * The fix: a retry first waits until every request of the same send's earlier attempts
 * has settled (its answer is then known, and that broker is not sent to again). Requests
 * are followed per send through the producer's broker lock, taken and released around
 * each one. The first attempt never waits, and no send waits for another's requests, so
 * sends of one producer still overlap. A retry after a failure that may mean the leader
 * moved asks for the metadata just before it; and while it waits for kafkajs's backoff,
 * the send's leaders are watched (send-leader-watch.ts): once one differs from what the
 * failed attempt went by, the next attempt starts at once, and kafkajs's timer, when it
 * fires, collects its result (it still counts as one of kafkajs's retries). Applied once
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

/**
 * The fix on any factory with sendMessages's arguments (its unit test's too). Each send
 * follows only its own requests: kafkajs makes one send function per producer, so the
 * factory is called again per send, with a lock wrapper and a retrier of that send's own.
 * One send's retry never waits for another send's requests (the aggregator sends
 * concurrently through one producer).
 */
export function settledRetries(factory: SendFactory, pollMs = SEND_LEADER_POLL_MS): SendFactory {
  return (args) => async (input: unknown) => {
    const tracker = new SendRequests(args.eosManager);
    const topics = topicsOf(input);
    let lastError: unknown;
    const send = factory({
      ...args,
      eosManager: tracker.locks,
      retrier: (attempt) =>
        aheadOfBackoff({
          retrier: args.retrier,
          prepare: async () => {
            await tracker.settled();
            if (leaderMayHaveMoved(lastError)) await freshMetadata(args.cluster);
          },
          attempt: async (bail, retryCount, retryTime) => {
            try {
              return await attempt(bail, retryCount, retryTime);
            } catch (error) {
              lastError = error;
              throw error;
            }
          },
          leaders: () => leaderLists(args.cluster, topics),
          cluster: args.cluster,
          topics,
          failure: leaderFailure,
          pollMs,
        }),
    }) as (input: unknown) => Promise<unknown>;
    return send(input);
  };
}

/** The topics a send writes to (kafkajs's send input, { topicMessages: [{ topic, messages }] }). */
function topicsOf(input: unknown): string[] {
  const list = (input as { topicMessages?: unknown } | undefined)?.topicMessages;
  return Array.isArray(list) ? list.map((t) => String((t as { topic?: unknown }).topic)) : [];
}

interface MetadataSource {
  refreshMetadata(): Promise<void>;
}

/**
 * kafkajs refreshes metadata when an attempt fails, then waits out its backoff and sends
 * by that refresh: a leader elected during the wait (a broker failover) is found only
 * after one more failed attempt and one more backoff. Asked again just before the
 * attempt, the send goes to the new leader at once. A refresh that fails (no broker
 * answers) leaves the attempt to fail or succeed on what kafkajs knows.
 */
async function freshMetadata(cluster: unknown): Promise<void> {
  const source = cluster as Partial<MetadataSource> | undefined;
  if (typeof source?.refreshMetadata !== 'function') return;
  await source.refreshMetadata().catch(() => undefined);
}

/** Errors after which the partition's leader may be another broker: a refresh before the retry finds it. */
const LEADER_ERRORS = new Set(['KafkaJSConnectionError', 'KafkaJSConnectionClosedError', 'KafkaJSRequestTimeoutError', 'KafkaJSBrokerNotFound']);
/** Answers of a live broker that it does not lead the partition (yet, or any more). */
const LEADER_TYPES = new Set(['NOT_LEADER_FOR_PARTITION', 'NOT_LEADER_OR_FOLLOWER', 'LEADER_NOT_AVAILABLE', 'FENCED_LEADER_EPOCH']);
/** Failures whose cure is another leader in the metadata: a broker that cannot be reached, a partition the metadata does not know. */
const UNREACHABLE_TYPES = new Set(['UNKNOWN_TOPIC_OR_PARTITION']);

/** Not after other refusals (too few replicas in sync, a record too large): a retry kept up for long then asks nothing more of the brokers than kafkajs's own. */
function leaderMayHaveMoved(error: unknown): boolean {
  return leaderFailure(error) !== undefined;
}

/** A broker that answered it does not lead the partition, or one that could not be reached (aheadOfBackoff). */
function leaderFailure(error: unknown): LeaderFailure {
  const e = error as { name?: unknown; type?: unknown } | undefined;
  if (LEADER_TYPES.has(String(e?.type))) return 'answered';
  return LEADER_ERRORS.has(String(e?.name)) || UNREACHABLE_TYPES.has(String(e?.type)) ? 'unreachable' : undefined;
}

/** The requests of one send, followed through the producer's broker lock taken and released around each. */
class SendRequests {
  readonly locks: BrokerLocks;
  /** Requests between asking for a broker's lock and letting it go. */
  private inFlight = 0;
  private idle: (() => void)[] = [];

  constructor(eosManager: BrokerLocks) {
    const locks = Object.create(eosManager as object) as BrokerLocks;
    locks.acquireBrokerLock = async (broker) => {
      this.inFlight++;
      try {
        await eosManager.acquireBrokerLock.call(eosManager, broker);
      } catch (error) {
        // kafkajs lets go only of a lock it took.
        this.settle();
        throw error;
      }
    };
    locks.releaseBrokerLock = async (broker) => {
      try {
        await eosManager.releaseBrokerLock.call(eosManager, broker);
      } finally {
        this.settle();
      }
    };
    this.locks = locks;
  }

  /** Resolves once none of this send's requests is in flight. */
  settled(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise<void>((wake) => this.idle.push(wake));
  }

  private settle(): void {
    if (--this.inFlight > 0) return;
    const waiting = this.idle;
    this.idle = [];
    for (const wake of waiting) wake();
  }
}
