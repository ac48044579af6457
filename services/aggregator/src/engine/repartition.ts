import type { SubjectCountBatch, SubjectCountEntry } from '@banstream/schemas';
import { partitionFor } from './routing.js';

/**
 * Stage one of the two-phase count for subjects that are not local to an events
 * partition: the events of one record are summed per (policy, subject, time) and
 * sent, as one SubjectCountBatch per owner partition, to the partition that owns
 * the subject (murmur2 of the subject, as Kafka's default partitioner). A country
 * seen a thousand times in a record travels as a handful of entries.
 */
export class RepartitionBuffer {
  private readonly pending = new Map<number, SubjectCountEntry[]>();
  /** The open entry of each (policy, subject) in the current events record. */
  private readonly open = new Map<string, Map<string, SubjectCountEntry>>();
  private offset = -1;
  private entries = 0;

  constructor(private readonly sourcePartition: number, private readonly partitions: number) {}

  /** Entries waiting to be sent. */
  get size(): number {
    return this.entries;
  }

  /** Starts summing the events record at `offset`; closes the previous one. */
  begin(offset: number): void {
    this.close();
    this.offset = offset;
  }

  /**
   * Events of a record come roughly in time order, so one open entry per (policy,
   * subject) absorbs every event at its time; an event at another time closes it.
   */
  add(policyId: string, subject: string, timeMs: number, count: number): void {
    let bySubject = this.open.get(policyId);
    if (!bySubject) this.open.set(policyId, (bySubject = new Map()));
    const entry = bySubject.get(subject);
    if (entry && entry.timestamp === timeMs) {
      entry.count += count;
      return;
    }
    if (entry) this.queue(entry);
    bySubject.set(subject, { offset: this.offset, policyId, subject, timestamp: timeMs, count });
  }

  /** Everything added so far, one batch per owner partition; the buffer is then empty. */
  take(): { partition: number; batch: SubjectCountBatch }[] {
    this.close();
    const out = [...this.pending].map(([partition, entries]) => ({ partition, batch: { sourcePartition: this.sourcePartition, entries } }));
    this.pending.clear();
    this.entries = 0;
    return out;
  }

  private close(): void {
    for (const bySubject of this.open.values()) {
      for (const entry of bySubject.values()) this.queue(entry);
      bySubject.clear();
    }
  }

  private queue(entry: SubjectCountEntry): void {
    // murmur2 per entry: in 32-bit arithmetic it costs less than a memo's Map lookup.
    const partition = partitionFor(entry.subject, this.partitions);
    let list = this.pending.get(partition);
    if (!list) this.pending.set(partition, (list = []));
    list.push(entry);
    this.entries++;
  }
}

/**
 * Stage two's guard against counting twice. Whoever reads an events partition
 * after a crash or a rebalance may send again what the previous owner sent; entries
 * carry their events offset, and the contents of one events record are always the
 * same, so an entry is applied only if its offset is beyond every offset already
 * applied from that events partition.
 */
export class AppliedOffsets {
  private readonly highest = new Map<number, number>();

  /** The entries of `batch` not applied yet; marks them applied. */
  fresh(batch: SubjectCountBatch): SubjectCountEntry[] {
    const before = this.highest.get(batch.sourcePartition) ?? -1;
    const out = batch.entries.filter((e) => e.offset > before);
    if (out.length > 0) this.highest.set(batch.sourcePartition, out[out.length - 1]!.offset);
    return out;
  }
}
