import { FailureRuns } from './failure-runs.js';
import { kafkajsConsumerGroupPrototype } from './member-rejoin-fix.js';

/**
 * kafkajs 2.2.4's consumer, when it cannot connect to a partition's leader (the broker
 * died: ECONNREFUSED, or cannot be reached), throws out of its fetch loop: the fetchers
 * stop and start again after the retrier's backoff, still by the metadata they had, until
 * the retries run out and the consumer crashes and is restarted. A new leader elected
 * meanwhile is found only by that restart's metadata refresh: in the failover benchmark
 * the aggregator read a flood's events, and the sidecars its ban, a second or more after
 * Kafka had moved the partitions.
 *
 * The fix: such a fetch refreshes the metadata after a short pause and returns nothing,
 * as kafkajs already does for a broker it no longer knows; once the leader has moved,
 * kafkajs's next fetch sees other leaders and rebuilds its fetchers. A refresh that no
 * broker answers throws, as before. A broker that stays unreachable and still leads (the
 * cluster does not fence it) goes kafkajs's own way after a while: the consumer crashes
 * and restarts, and says so.
 *
 * Shorter waits meanwhile: a broker reads one request at a time from a connection, so a
 * fetch to the new leader queues behind the long poll already waiting there, which does
 * not ask for the moved partitions and so waits out its whole wait (500 ms for the
 * aggregator and the compacted feeds) before the new fetch is even read; in the failover
 * benchmark's logs the sidecars' fetch that brought the first floods' bans was answered
 * the moment the empty one before it on the same connection ended, 0.3 to 0.6 s after
 * the bans were written. So after any failed fetch, and for SHORT_WAIT_HOLD_MS after
 * the last, a consumer's fetches wait at most SHORT_WAIT_MS: a leader's death is a run
 * of failed fetches until its partitions move, so the fetches waiting at the new leaders
 * when they do are short ones. Then its own wait again.
 */

/** The fields of kafkajs's ConsumerGroup the patch uses (src/consumer/consumerGroup.js). A run is failures less than LEADER_WAIT_MS apart. */
interface FetchRecovery {
  cluster: { refreshMetadata(): Promise<void> };
  /** The fetch's long poll at the broker (maxWaitTimeInMs), read by each fetch. */
  maxWaitTime: number;
  fetch(nodeId: number): Promise<unknown>;
  recoverFromFetch(error: unknown): Promise<void>;
}

/** Between a failed connection and the metadata refresh: how often the metadata is asked while a leader is dead. */
export const LEADER_POLL_MS = 100;
/** How long a run of failed connections is met by refreshing, before kafkajs's own crash and restart. */
export const LEADER_WAIT_MS = 10_000;
/**
 * A failure this long after the last one is a new outage, not the same one going on.
 * Within one, a failure follows the last handling at once (the next fetch's connect),
 * or after a connect timeout at most (3 s, createKafka). Two broker failures some seconds
 * apart (the leader-move benchmark's kills, 6 s or more apart) were one run with the
 * wait as the gap: past 10 s from the first, their failures went kafkajs's way, and its
 * consumer's retries, which no fetch that succeeds in between renews, ran out: a crash
 * in 3 of 6 runs of 8 kills.
 */
export const OUTAGE_GAP_MS = 5_000;
/** A fetch's longest wait at the broker after a failed fetch (see above): 100 ms brought a ban to the sidecars 60 to 90 ms after it was written, against 0.3 to 0.6 s. */
export const SHORT_WAIT_MS = 100;
/** How long after the last failed fetch the short wait holds: the first fetches at the new leaders. */
export const SHORT_WAIT_HOLD_MS = 2_000;

let applied = false;

/** Patches kafkajs's ConsumerGroup; returns whether it is patched. */
export function fixKafkajsFetchOnLeaderMove(): boolean {
  if (applied) return true;
  applied = refreshOnUnreachableLeader(kafkajsConsumerGroupPrototype());
  return applied;
}

/** The patch on any prototype with ConsumerGroup's shape (the unit test's too). */
export function refreshOnUnreachableLeader(proto: object, pauseMs = LEADER_POLL_MS, waitMs = LEADER_WAIT_MS, now: () => number = Date.now, gapMs = OUTAGE_GAP_MS): boolean {
  const p = proto as Partial<FetchRecovery>;
  const { recoverFromFetch, fetch } = p;
  if (typeof recoverFromFetch !== 'function' || typeof fetch !== 'function') return false;
  /** Per ConsumerGroup: its runs of failed connections. */
  const runs = new FailureRuns(gapMs);
  /** Per ConsumerGroup whose waits are short: its own wait, and until when. */
  const shortened = new WeakMap<object, { ownWaitMs: number; until: number }>();
  p.fetch = function fetchWithWaitOfTheMoment(this: FetchRecovery, nodeId: number): Promise<unknown> {
    const short = shortened.get(this);
    if (short && now() >= short.until) {
      this.maxWaitTime = short.ownWaitMs;
      shortened.delete(this);
    }
    return fetch.call(this, nodeId);
  };
  p.recoverFromFetch = async function recoverFromUnreachableLeader(this: FetchRecovery, error: unknown): Promise<void> {
    const ownWaitMs = shortened.get(this)?.ownWaitMs ?? this.maxWaitTime;
    shortened.set(this, { ownWaitMs, until: now() + SHORT_WAIT_HOLD_MS });
    this.maxWaitTime = Math.min(ownWaitMs, SHORT_WAIT_MS);
    if ((error as { name?: unknown } | undefined)?.name !== 'KafkaJSConnectionError') return recoverFromFetch.call(this, error);
    // Past the wait, every failure goes kafkajs's way until its retries run out and it
    // restarts the consumer (a new ConsumerGroup, a new run): not one failure a run.
    if (runs.failed(this, now()) > waitMs) return recoverFromFetch.call(this, error);
    await new Promise((r) => setTimeout(r, pauseMs));
    await this.cluster.refreshMetadata();
    runs.handled(this, now());
  };
  return true;
}
