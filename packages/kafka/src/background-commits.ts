/** The offset to commit for one partition: the next one to read. */
export interface PartitionOffset {
  topic: string;
  partition: number;
  offset: string;
}

/**
 * A consumer's offset commits, sent beside its fetch loop instead of in it. kafkajs
 * commits after each batch and fetches nothing until the commit is answered: when the
 * group's coordinator dies, that is until Kafka has moved the group and the new
 * coordinator has loaded it, a second or more, while the records behind (a flood's ban)
 * wait unread. Here the newest offset of each partition is kept, and one commit at a
 * time sends what is kept: no commit carries an offset older than one sent before it.
 * A commit that fails (kafkajs has retried it) is told to `failed` and not sent again:
 * the partition's next offset goes in the next commit; until then a restart reads from
 * the last one committed.
 *
 * Alone, only for a group of one member (a feed read whole by each process): with several,
 * an offset kept across a rebalance could be sent for a partition another member owns now
 * (MemberCommits drops them at each rebalance).
 */
export class BackgroundCommits {
  private readonly kept = new Map<string, PartitionOffset>();
  /** Per partition, the highest offset added: an offset below it is not sent (no commit goes back). */
  private readonly highest = new Map<string, bigint>();
  private sending: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly commit: (offsets: PartitionOffset[]) => Promise<void>,
    private readonly failed: (error: unknown, offsets: readonly PartitionOffset[]) => void,
  ) {}

  /** Commits `offset` of the partition soon, or a higher one if added before it is sent; returns at once. One below an offset added before is ignored. */
  add(topic: string, partition: number, offset: string): void {
    if (this.closed) return;
    const key = `${partition}:${topic}`;
    const at = BigInt(offset);
    if (at <= (this.highest.get(key) ?? -1n)) return;
    this.highest.set(key, at);
    this.kept.set(key, { topic, partition, offset });
    this.sending ??= this.send();
  }

  /** Forgets the offsets kept and not yet sent, and the highest added (a rebalance: they were the old generation's); a commit in flight goes on. */
  drop(): void {
    this.kept.clear();
    this.highest.clear();
  }

  /** Sends nothing more (the consumer stops): what is kept and not sent is dropped; settled() waits for a commit in flight. */
  close(): void {
    this.closed = true;
    this.kept.clear();
  }

  /** Resolves once every offset added so far has been sent (committed, or failed and told). */
  async settled(): Promise<void> {
    while (this.sending) await this.sending;
  }

  private async send(): Promise<void> {
    // A turn later: the batches of one fetch, handed on together, go in one commit.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      while (this.kept.size > 0 && !this.closed) {
        const offsets = [...this.kept.values()];
        this.kept.clear();
        try {
          await this.commit(offsets);
        } catch (error) {
          this.failed(error, offsets);
        }
      }
    } finally {
      this.sending = undefined;
    }
  }
}
