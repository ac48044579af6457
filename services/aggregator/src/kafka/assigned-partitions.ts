import type { Admin, Consumer } from '@banstream/kafka';
import type { Logger } from '@banstream/platform';

/** Wait before planning a failed assignment again. */
const RETRY_PLAN_MS = 500;

interface Held<S> {
  state: S;
  /** The offset expected next; undefined until the replay start is known and sought. */
  next: bigint | undefined;
  /** The first message at `next` has been seen: from then on the stream is ours. */
  synced: boolean;
  /** Offsets below this were processed by an earlier owner (the group's committed offset). */
  resumeAt: bigint;
}

export interface AssignedPartitionsOptions<S> {
  consumer: Consumer;
  admin: Admin;
  topic: string;
  groupId: string;
  logger: Logger;
  /** How far back (ms before now) state must be rebuilt from: the longest window plus grace. */
  horizonMs(): number;
  nowMs(): number;
  create(partition: number): S;
  /** Awaited before newly owned partitions are sought: state they need from elsewhere (a changelog) is read first. */
  prepare?(partitions: readonly number[]): Promise<void>;
}

/**
 * The partitions a stage's consumer owns, each with the state counted from it.
 * On every assignment a newly owned partition gets fresh state and is sought back
 * to the first record within the horizon, so its windows are rebuilt by replaying
 * retained input before it decides anything new; records before the group's
 * committed offset are marked as replay (`live` false). A revoked partition's state
 * is dropped whole. Records are accepted strictly in offset order from the sought
 * offset, so a batch fetched before the seek took effect is never counted.
 */
export class AssignedPartitions<S> {
  private readonly held = new Map<number, Held<S>>();
  private generation = 0;

  constructor(private readonly options: AssignedPartitionsOptions<S>) {
    const { consumer } = options;
    let memberId: string | undefined;
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      // Joined as a new member: the group had evicted this one (found by a heartbeat, or by a
      // commit no handler waited for), and what it holds may have been counted by another
      // member since: rebuilt by replay, as after an eviction a commit reported.
      if (memberId !== undefined && event.payload.memberId !== memberId) this.release();
      memberId = event.payload.memberId;
      const assigned = [...(event.payload.memberAssignment[options.topic] ?? [])];
      this.resume(assigned);
      this.plan(assigned);
    });
    // kafkajs restarts a crashed consumer (Kafka away too long) from the committed offsets: rebuild, as after an eviction.
    consumer.on(consumer.events.CRASH, () => this.release());
  }

  /**
   * After a rebalance kafkajs starts every partition afresh from the group's committed
   * offset (a new offset manager; a seek it already applied is gone). A partition this
   * member keeps goes on from where the member is instead: mid-replay, from the next
   * record of the replay (from the committed offset it would skip the rest of the
   * replay, or, before its first record, wait for a record that never comes); live,
   * from the next record, not from records already counted. Synchronous, so the seek
   * is in place before the new generation's first fetch.
   */
  private resume(assigned: readonly number[]): void {
    for (const p of assigned) {
      const next = this.held.get(p)?.next;
      if (next !== undefined) this.options.consumer.seek({ topic: this.options.topic, partition: p, offset: next.toString() });
    }
  }

  /** Plans an assignment; a failure (a leader still being elected…) is retried until a newer assignment comes. */
  private plan(assigned: number[]): void {
    const generation = this.generation + 1;
    void this.assign(assigned).catch((error: unknown) => {
      this.options.logger.warn({ err: error, topic: this.options.topic }, 'could not plan the replay of assigned partitions; retrying');
      setTimeout(() => {
        if (this.generation === generation) this.plan(assigned);
      }, RETRY_PLAN_MS).unref();
    });
  }

  /** States of the owned partitions that are past their replay: the ones that may publish. */
  *live(): Generator<S> {
    for (const h of this.held.values()) if (h.next !== undefined && h.next >= h.resumeAt) yield h.state;
  }

  /** States of every owned partition. */
  *states(): Generator<S> {
    for (const h of this.held.values()) yield h.state;
  }

  has(partition: number): boolean {
    return this.held.has(partition);
  }

  /** Every owned partition has been sought and is counting. */
  get ready(): boolean {
    for (const h of this.held.values()) if (h.next === undefined) return false;
    return true;
  }

  /** Partitions still replaying records an earlier owner had processed. */
  get replaying(): number {
    let n = 0;
    for (const h of this.held.values()) if (h.next === undefined || h.next < h.resumeAt) n++;
    return n;
  }

  /**
   * The state to count the record at (partition, offset) into, or undefined to skip
   * it (not owned, not sought yet, or not the next record). `live` is false while
   * the record was already processed by an earlier owner. A record standing for a
   * batch that could not be read has the batch's last offset and stands for all of
   * them from `firstOffset`: it is the next record when the next offset is among them.
   */
  accept(partition: number, offset: string, firstOffset: string = offset): { state: S; live: boolean } | undefined {
    const h = this.held.get(partition);
    if (!h || h.next === undefined) return undefined;
    const at = BigInt(offset);
    if (at < h.next || (!h.synced && BigInt(firstOffset) > h.next)) return undefined;
    h.synced = true;
    h.next = at + 1n;
    return { state: h.state, live: at >= h.resumeAt };
  }

  /**
   * Forgets every partition and its state, and any assignment being planned: the
   * member lost them (the group evicted it), so what it is assigned next is rebuilt
   * by replay rather than continued from records the group will deliver again.
   */
  release(): void {
    this.generation++;
    this.held.clear();
  }

  /** release(), unless an assignment came since this was called (a commit that failed late must not forget it). */
  releaser(): () => void {
    const generation = this.generation;
    return () => {
      if (this.generation === generation) this.release();
    };
  }

  /**
   * Was the record at (partition, offset) already counted by this member? After a
   * rebalance kafkajs fetches a partition the member kept from the group's committed
   * offset, which can lie several fetches behind what the member has counted: those
   * records are skipped, and must still be resolved, or kafkajs fetches them again
   * for ever. Only once the stream is ours (synced): before that a seek is pending,
   * which resolving a stale record would undo.
   */
  counted(partition: number, offset: string): boolean {
    const h = this.held.get(partition);
    return h !== undefined && h.synced && h.next !== undefined && BigInt(offset) < h.next;
  }

  /** Is everything of this partition up to `offset` beyond the replay? */
  isLive(partition: number, offset: string): boolean {
    const h = this.held.get(partition);
    return h !== undefined && BigInt(offset) >= h.resumeAt;
  }

  private async assign(assigned: number[]): Promise<void> {
    const generation = ++this.generation;
    const { admin, topic, groupId, logger } = this.options;
    for (const p of [...this.held.keys()]) if (!assigned.includes(p)) this.held.delete(p);
    // Also those a superseded assignment left unplanned.
    const added = assigned.filter((p) => this.held.get(p)?.next === undefined);
    if (added.length === 0) return;
    for (const p of added) if (!this.held.has(p)) this.held.set(p, { state: this.options.create(p), next: undefined, synced: false, resumeAt: 0n });
    await this.options.prepare?.(added);
    if (generation !== this.generation) return;
    const from = this.options.nowMs() - this.options.horizonMs();
    const [starts, committed] = await Promise.all([admin.fetchTopicOffsetsByTimestamp(topic, from), admin.fetchOffsets({ groupId, topics: [topic] })]);
    if (generation !== this.generation) return; // a newer assignment superseded this one
    const committedOf = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
    for (const p of added) {
      const h = this.held.get(p);
      const start = starts.find((s) => s.partition === p);
      if (!h || !start) continue;
      const startAt = BigInt(start.offset);
      const done = committedOf.get(p) ?? -1n;
      h.resumeAt = done > startAt ? done : startAt;
      h.next = startAt;
      this.options.consumer.seek({ topic, partition: p, offset: start.offset });
      logger.info({ topic, partition: p, replayFrom: start.offset, resumeAt: h.resumeAt.toString() }, 'partition assigned: rebuilding state by replay');
    }
  }
}
