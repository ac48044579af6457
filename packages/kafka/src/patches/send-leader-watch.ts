/**
 * A failed send waits out kafkajs's backoff (up to 300 ms, CLIENT_RETRY) before its next
 * attempt, however soon Kafka names the partition's new leader: in the failover benchmark
 * the first floods' events were written up to 0.3 s after the leaders had moved, one
 * retry's spacing. Meanwhile (aheadOfBackoff, used by send-retry-fix.ts):
 * - after a broker could not be reached, the send's topics' metadata is asked for every
 *   SEND_LEADER_POLL_MS, and once a leader differs from what the failed attempt went by,
 *   the next attempt starts at once;
 * - after a broker answered that it does not lead the partition (it has not yet applied
 *   the election that another broker's metadata already names), the next attempt starts
 *   SEND_LEADER_POLL_MS later, as the Java client retries after retry.backoff.ms.
 * Such an attempt fills kafkajs's next retry ahead of its timer: kafkajs, when the timer
 * fires, collects its result, so the send's retries and their total time stay kafkajs's.
 * Within one backoff, an attempt started early that fails may be followed by another: one
 * at a time, at most one every SEND_LEADER_POLL_MS.
 */

/** How often a failed send's metadata is asked for, or its attempt made again, while it waits for kafkajs's next retry. */
export const SEND_LEADER_POLL_MS = 50;

interface LeaderSource {
  refreshMetadata(): Promise<void>;
  findTopicPartitionMetadata(topic: string): readonly { partitionId: number; leader: number }[];
}

const isLeaderSource = (cluster: unknown): cluster is LeaderSource =>
  typeof (cluster as Partial<LeaderSource> | undefined)?.refreshMetadata === 'function' && typeof (cluster as Partial<LeaderSource> | undefined)?.findTopicPartitionMetadata === 'function';

type PartitionLists = readonly (readonly { partitionId: number; leader: number }[])[];

/**
 * The partition lists of `topics` in the cluster's metadata as it is now; undefined when
 * it cannot tell (no metadata yet, a stand-in cluster). Cheap, taken before every attempt:
 * kafkajs replaces its metadata at each refresh and never changes a list it gave, so the
 * lists are a snapshot, read (leadersText) only when an attempt has failed.
 */
export function leaderLists(cluster: unknown, topics: readonly string[]): PartitionLists | undefined {
  if (!isLeaderSource(cluster)) return undefined;
  try {
    return topics.map((topic) => cluster.findTopicPartitionMetadata(topic));
  } catch {
    return undefined;
  }
}

/** Partition lists as one comparable string. */
export function leadersText(lists: PartitionLists | undefined): string | undefined {
  return lists?.map((partitions) => partitions.map((p) => `${p.partitionId}:${p.leader}`).join(',')).join(';');
}

/** The leaders of `topics`' partitions in the cluster's metadata now, as one string. */
export const leadersOf = (cluster: unknown, topics: readonly string[]): string | undefined => leadersText(leaderLists(cluster, topics));

/**
 * Asks for the metadata every `pollMs` until the leaders of `topics` differ from `before`,
 * then calls `moved` once. Returns a stop function; a failed refresh is asked again at the
 * next turn (the attempt kafkajs schedules is the fallback either way).
 */
export function watchLeaders(cluster: unknown, topics: readonly string[], before: string | undefined, moved: () => void, pollMs = SEND_LEADER_POLL_MS): () => void {
  if (before === undefined || !isLeaderSource(cluster)) return () => undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const turn = async () => {
    if (stopped) return;
    // kafkajs's own refresh after the failure may already name the new leader.
    if (leadersOf(cluster, topics) !== before) {
      stopped = true;
      moved();
      return;
    }
    timer = setTimeout(() => {
      cluster.refreshMetadata().then(turn, turn);
    }, pollMs);
  };
  // After the failure has reached kafkajs (it schedules the next attempt, or gives up).
  timer = setTimeout(turn, 0);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

type Retrier = (attempt: (bail: unknown, retryCount: number, retryTime: number) => Promise<unknown>) => Promise<unknown>;

/** What a failed attempt says of the partition's leader: a broker that answered it leads nothing here, a broker that could not be reached, or neither. */
export type LeaderFailure = 'answered' | 'unreachable' | undefined;

interface AheadOptions {
  /** kafkajs's retrier of this send. */
  retrier: Retrier;
  /** Before each retry (settling the send's earlier requests, a fresh metadata). */
  prepare: (retryCount: number) => Promise<void>;
  /** kafkajs's attempt. */
  attempt: (bail: unknown, retryCount: number, retryTime: number) => Promise<unknown>;
  /** The send's leaders as an attempt goes by them (leaderLists). */
  leaders: () => PartitionLists | undefined;
  cluster: unknown;
  topics: readonly string[];
  failure: (error: unknown) => LeaderFailure;
  pollMs?: number;
}

/** A retry started before kafkajs's timer: its result, whether it is still on its way, and how it failed. */
interface Ahead {
  retryCount: number;
  result: Promise<unknown>;
  running: boolean;
  failed?: { error: unknown; sentBy: PartitionLists | undefined };
}

/**
 * kafkajs's retrier around `attempt`, with the next retry started ahead of kafkajs's
 * backoff when the leader has moved (see above). Resolves with the first attempt that
 * succeeds, early or not; rejects as kafkajs's retrier does.
 */
export function aheadOfBackoff(o: AheadOptions): Promise<unknown> {
  const pollMs = o.pollMs ?? SEND_LEADER_POLL_MS;
  let finished = false;
  /** The last retry kafkajs has called for, its bail and its backoff. */
  let called = -1;
  let bail: unknown;
  let retryTime = 0;
  let ahead: Ahead | undefined;
  /** The trigger of an early start of retry `retryCount`, armed after a failure. */
  let armed: { retryCount: number; cancel: () => void } | undefined;
  let lastEarlyStart = Number.NEGATIVE_INFINITY;
  let earlyDone: (value: unknown) => void = () => undefined;

  const run = async (retryCount: number, early: Ahead | undefined): Promise<unknown> => {
    if (retryCount > 0) await o.prepare(retryCount);
    const sentBy = o.leaders();
    try {
      return await o.attempt(bail, retryCount, retryTime);
    } catch (error) {
      if (early) early.failed = { error, sentBy };
      // Until kafkajs calls for this retry, its slot is still open; after, the next one is.
      arm(called >= retryCount ? retryCount + 1 : retryCount, error, sentBy);
      throw error;
    }
  };
  const arm = (retryCount: number, error: unknown, sentBy: PartitionLists | undefined) => {
    armed?.cancel();
    armed = undefined;
    if (finished) return;
    const kind = o.failure(error);
    // At most one early attempt every pollMs: leaders that keep changing cannot make a loop of it.
    const go = () => {
      const wait = lastEarlyStart + pollMs - performance.now();
      if (wait <= 0) return startEarly(retryCount);
      const timer = setTimeout(() => startEarly(retryCount), wait);
      armed = { retryCount, cancel: () => clearTimeout(timer) };
    };
    if (kind === 'answered') {
      const timer = setTimeout(go, pollMs);
      armed = { retryCount, cancel: () => clearTimeout(timer) };
    } else if (kind === 'unreachable') {
      armed = { retryCount, cancel: watchLeaders(o.cluster, o.topics, leadersText(sentBy), go, pollMs) };
    }
  };
  const startEarly = (retryCount: number) => {
    // One at a time, and only for a retry kafkajs has not called for yet.
    if (finished || called >= retryCount || ahead?.running) return;
    armed = undefined;
    lastEarlyStart = performance.now();
    const early: Ahead = { retryCount, result: Promise.resolve(), running: true };
    early.result = run(retryCount, early);
    early.result.then(earlyDone, () => undefined).finally(() => (early.running = false));
    ahead = early;
  };

  const own = o.retrier((b, retryCount, time) => {
    called = retryCount;
    bail = b;
    retryTime = time;
    if (armed?.retryCount === retryCount) {
      armed.cancel();
      armed = undefined;
    }
    const early = ahead?.retryCount === retryCount ? ahead : undefined;
    if (!early) return run(retryCount, undefined);
    ahead = undefined;
    // Collected failed: kafkajs backs off now; its next retry may start early as after any failure.
    if (early.failed) arm(retryCount + 1, early.failed.error, early.failed.sentBy);
    return early.result;
  });
  // kafkajs's timer still fires after an early success (within its backoff, 300 ms at
  // most with CLIENT_RETRY) and collects the same result: no request of its own.
  return new Promise((resolve, reject) => {
    const finish = () => {
      finished = true;
      armed?.cancel();
    };
    earlyDone = (value) => {
      finish();
      resolve(value);
    };
    own.then(
      (value) => {
        finish();
        resolve(value);
      },
      (error: unknown) => {
        finish();
        reject(error);
      },
    );
  });
}
