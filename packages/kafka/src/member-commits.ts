import { BackgroundCommits, type PartitionOffset } from './background-commits.js';

/** How long a batch handler waits for its offsets to be committed before going on without. */
export const MEMBER_COMMIT_WAIT_MS = 100;

/**
 * The offset commits of a member of a group with several (the aggregator's stages). A
 * handler waits for its commit, as with kafkajs's own, so that a rebalance, which waits
 * for the handlers, normally finds every offset committed; but for at most `waitMs`.
 * When the group's coordinator dies, a commit is answered only once Kafka has moved the
 * group and the new coordinator has loaded it, and kafkajs fetched nothing meanwhile, not
 * even from partitions whose new leaders were up: in the failover benchmark's logs the
 * aggregator read no event for 1.2 s after the kill, its commit answered at last 1.2 s
 * after it was sent, and the first floods' bans were written 0.5 s after their events.
 * A commit slower than `waitMs` goes on beside the fetch loop (BackgroundCommits: one at
 * a time, the newest offset of each partition); until it is answered, later handlers
 * hand their offsets over and do not wait.
 *
 * A failure of a commit no handler waited for is thrown to the next handler, as kafkajs's
 * own would have been from the handler itself. A rebalance (`rejoined`, on GROUP_JOIN)
 * drops the offsets not sent yet and the failures of commits sent before it: they were
 * the old generation's, and may be for partitions another member owns now.
 */
export class MemberCommits {
  private readonly commits: BackgroundCommits;
  /** Counts rebalances: a commit sent before the last one fails as the old generation's, which is not this member's concern any more. */
  private epoch = 0;
  /** A handler stopped waiting for the commit under way: later ones do not wait until it is answered. */
  private slow = false;
  private failure: { error: unknown } | undefined;

  constructor(
    commit: (offsets: PartitionOffset[]) => Promise<void>,
    private readonly waitMs = MEMBER_COMMIT_WAIT_MS,
  ) {
    this.commits = new BackgroundCommits(
      async (offsets) => {
        const epoch = this.epoch;
        try {
          await commit(offsets);
        } catch (error) {
          if (epoch === this.epoch) this.failure ??= { error };
        } finally {
          this.slow = false;
        }
      },
      () => undefined,
    );
  }

  /**
   * Commits `offset` of the partition: resolves once it is committed, or after `waitMs`,
   * or at once while a commit a handler stopped waiting for is unanswered. Throws the failure of a
   * commit this member made since the last rebalance that no call has thrown yet.
   */
  async commit(topic: string, partition: number, offset: string): Promise<void> {
    this.throwFailure();
    this.commits.add(topic, partition, offset);
    if (this.slow) return;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), this.waitMs)));
    const settled = await Promise.race([this.commits.settled().then(() => true), timedOut]);
    clearTimeout(timer);
    if (settled) this.throwFailure();
    else this.slow = true;
  }

  /** The group was joined again: offsets kept from before are not sent, failures from before are not thrown. */
  rejoined(): void {
    this.epoch++;
    this.commits.drop();
    this.failure = undefined;
  }

  /** Sends nothing more (the consumer has stopped). */
  close(): void {
    this.commits.close();
  }

  /** Resolves once every offset handed over has been sent. */
  settled(): Promise<void> {
    return this.commits.settled();
  }

  private throwFailure(): void {
    const { failure } = this;
    if (!failure) return;
    this.failure = undefined;
    throw failure.error;
  }
}
