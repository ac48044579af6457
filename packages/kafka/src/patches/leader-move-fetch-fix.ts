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
 */

/** The fields of kafkajs's ConsumerGroup the patch uses (src/consumer/consumerGroup.js). A run is failures less than LEADER_WAIT_MS apart. */
interface FetchRecovery {
  cluster: { refreshMetadata(): Promise<void> };
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
  const { recoverFromFetch } = p;
  if (typeof recoverFromFetch !== 'function') return false;
  /** Per ConsumerGroup: its runs of failed connections. */
  const runs = new FailureRuns(gapMs);
  p.recoverFromFetch = async function recoverFromUnreachableLeader(this: FetchRecovery, error: unknown): Promise<void> {
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
