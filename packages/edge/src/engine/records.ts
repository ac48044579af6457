import type { Pending } from './event-buffer.js';

/** Events of one Kafka record: they share its key (the client /24 or /48). */
export interface KeyedGroup<T> {
  key: string;
  items: Pending<T>[];
}

/** A record ready for the producer, with the events it carries. */
export interface EncodedRecord<T> {
  key: string;
  value: Buffer;
  items: Pending<T>[];
}

/**
 * Groups events by partition key, keeping their order within each key, into groups
 * of at most `maxEvents` whose events span at most `maxSpanMs` by `timeOf` (when it
 * knows the time). Groups come in order of their first event. The span cap keeps a
 * partition's records in time order within `maxSpanMs` even when a backlog (Kafka
 * was away) is sent at once: without it, one busy /24's record could carry half a
 * minute of events before its neighbour's oldest, and the aggregator would find
 * those older than its grace and not count them. Events without a key (`keyOf`
 * returns undefined: no valid IP) come back apart, to be dropped as invalid.
 */
export function groupByKey<T>(
  items: readonly Pending<T>[],
  keyOf: (value: T) => string | undefined,
  maxEvents: number,
  timeOf: (value: T) => number | undefined = () => undefined,
  maxSpanMs = Number.POSITIVE_INFINITY,
): { groups: KeyedGroup<T>[]; invalid: Pending<T>[] } {
  const open = new Map<string, KeyedGroup<T> & { firstAt: number | undefined }>();
  const groups: KeyedGroup<T>[] = [];
  const invalid: Pending<T>[] = [];
  for (const item of items) {
    const key = keyOf(item.value);
    if (key === undefined) {
      invalid.push(item);
      continue;
    }
    const at = timeOf(item.value);
    let group = open.get(key);
    const spanFull = group?.firstAt !== undefined && at !== undefined && at - group.firstAt > maxSpanMs;
    if (group === undefined || group.items.length >= maxEvents || spanFull) {
      group = { key, items: [], firstAt: at };
      open.set(key, group);
      groups.push(group);
    }
    group.firstAt ??= at;
    group.items.push(item);
  }
  return { groups, invalid };
}

/**
 * Encodes each group as one batch record. A group that does not encode (an event
 * of the wrong shape, from an edge that skipped validation) is encoded again
 * without the events `isValid` refuses, which come back apart: one bad event must
 * not cost its neighbours.
 */
export function encodeGroups<T>(groups: readonly KeyedGroup<T>[], encode: (events: T[]) => Buffer, isValid: (value: T) => boolean): { records: EncodedRecord<T>[]; invalid: Pending<T>[] } {
  const records: EncodedRecord<T>[] = [];
  const invalid: Pending<T>[] = [];
  const tryEncode = (items: Pending<T>[]): Buffer | undefined => {
    try {
      return encode(items.map((i) => i.value));
    } catch {
      return undefined;
    }
  };
  for (const group of groups) {
    let items = group.items;
    let value = tryEncode(items);
    if (value === undefined) {
      items = [];
      for (const item of group.items) (isValid(item.value) ? items : invalid).push(item);
      value = items.length > 0 ? tryEncode(items) : undefined;
      if (value === undefined) {
        invalid.push(...items);
        continue;
      }
    }
    records.push({ key: group.key, value, items });
  }
  return { records, invalid };
}
