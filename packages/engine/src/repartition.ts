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

  constructor(
    private readonly sourcePartition: number,
    private readonly partitions: number,
  ) {}

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
   * `count` is the events' cost (1 to MAX_COST each). An entry's count is an Avro
   * int: a sum that would pass ENTRY_COUNT_MAX (a hostile record of 70,000 events
   * at the highest cost) closes the entry and opens another, never wraps.
   */
  add(policyId: string, subject: string, timeMs: number, count: number): void {
    let bySubject = this.open.get(policyId);
    if (!bySubject) this.open.set(policyId, (bySubject = new Map()));
    const entry = bySubject.get(subject);
    if (entry && entry.timestamp === timeMs && entry.count + count <= ENTRY_COUNT_MAX) {
      entry.count += count;
      return;
    }
    if (entry) this.queue(entry);
    bySubject.set(subject, { offset: this.offset, policyId, subject, timestamp: timeMs, count, seq: 0 });
  }

  /**
   * Everything added so far, in batches per owner partition, each under
   * MAX_BATCH_BYTES once encoded; the buffer is then empty. One events record with
   * tens of thousands of distinct users makes more entries than one Kafka record
   * holds: sent whole, the broker would refuse it for ever and stall the partition.
   */
  take(): { partition: number; batch: SubjectCountBatch }[] {
    this.close();
    const out: { partition: number; batch: SubjectCountBatch }[] = [];
    for (const [partition, entries] of this.pending) {
      numberWithinRecords(entries);
      for (const chunk of chunks(entries, MAX_BATCH_BYTES)) out.push({ partition, batch: { sourcePartition: this.sourcePartition, entries: chunk } });
    }
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

/** The largest count of one SubjectCountEntry: its `count` is an Avro int. */
export const ENTRY_COUNT_MAX = 2 ** 31 - 1;

/** Well under the broker's default record size limit (1 MiB, message.max.bytes). */
export const MAX_BATCH_BYTES = 512 * 1024;

/** seq: 0, 1, 2… among the entries of one events record (entries come in offset order). */
function numberWithinRecords(entries: SubjectCountEntry[]): void {
  let offset = -1;
  let seq = 0;
  for (const e of entries) {
    if (e.offset !== offset) {
      offset = e.offset;
      seq = 0;
    }
    e.seq = seq++;
  }
}

/** At most this many bytes for an entry once encoded: UTF-8 takes up to 3 bytes per UTF-16 unit, each long up to 10. */
const entryBytesAtMost = (e: SubjectCountEntry) => 3 * (e.policyId.length + e.subject.length) + 40;

function chunks(entries: SubjectCountEntry[], maxBytes: number): SubjectCountEntry[][] {
  const out: SubjectCountEntry[][] = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < entries.length; i++) {
    const size = entryBytesAtMost(entries[i]!);
    if (bytes + size > maxBytes && i > start) {
      out.push(entries.slice(start, i));
      start = i;
      bytes = 0;
    }
    bytes += size;
  }
  if (start < entries.length) out.push(start === 0 ? entries : entries.slice(start));
  return out;
}

/**
 * Stage two's guard against counting twice. Whoever reads an events partition
 * after a crash or a rebalance may send again what the previous owner sent; entries
 * carry their events offset and their place among that record's entries (seq), and
 * the contents of one events record are always the same, so an entry is applied only
 * if its (offset, seq) is beyond every one already applied from that events partition.
 * v1 entries all have seq 0: those of one batch pass together, as before.
 */
export class AppliedOffsets {
  private readonly highest = new Map<number, { offset: number; seq: number }>();

  /**
   * The indexes in `batch.entries` of the entries not applied yet, in order; marks
   * them applied. Indexes, so a failure names the entry's place in its record.
   */
  fresh(batch: SubjectCountBatch): number[] {
    const before = this.highest.get(batch.sourcePartition) ?? { offset: -1, seq: 0 };
    const out: number[] = [];
    const { entries } = batch;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (e.offset > before.offset || (e.offset === before.offset && e.seq > before.seq)) out.push(i);
    }
    if (out.length > 0) {
      const last = entries[out[out.length - 1]!]!;
      this.highest.set(batch.sourcePartition, { offset: last.offset, seq: last.seq });
    }
    return out;
  }
}
