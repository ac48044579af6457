/**
 * Past traffic for the geographic baselines, published as edges publish it: the
 * scenario's legitimate users over `historyRanges`, as RequestEventBatch records
 * keyed by client network, in time order. Each send holds at most 4 s of event time,
 * under the aggregator's 5 s grace, so no event of it is late on its partition.
 */
import type { Producer } from '@banstream/kafka';
import { eventPartitionKey } from '@banstream/core';
import { loadSchemaCatalog, SCHEMA_NAMES, type RequestEvent } from '@banstream/schemas';
import { eventOf, historyRanges, Scenario, type ScenarioOptions } from './scenario.js';

const SLICE_MS = 4_000;
const catalog = loadSchemaCatalog();

export async function publishHistory(
  producer: Producer,
  topic: string,
  options: ScenarioOptions,
  now: number,
  hoursAhead: number,
  onProgress?: (share: number) => void,
  since?: number,
): Promise<number> {
  // A generator of its own: history does not shift the live traffic's random draws.
  const scenario = new Scenario({ ...options, seed: options.seed + 1 }, now);
  const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
  // `since`: only the gap since then (a rerun's), contiguous with what was published before.
  const ranges: [number, number][] = since === undefined ? historyRanges(now, hoursAhead) : [[since, now]];
  const total = ranges.reduce((s, [a, b]) => s + (b - a), 0);
  let done = 0;
  let events = 0;
  let messages: { key: string; value: Buffer }[] = [];
  const flush = async () => {
    if (messages.length > 0) await producer.send({ topic, acks: -1, messages });
    messages = [];
  };
  for (const [from, to] of ranges) {
    for (let t = from; t < to; t += SLICE_MS) {
      const byKey = new Map<string, RequestEvent[]>();
      for (const r of scenario.legit(t, Math.min(to, t + SLICE_MS))) {
        const key = eventPartitionKey(r.ip);
        let list = byKey.get(key);
        if (!list) byKey.set(key, (list = []));
        list.push(eventOf(r, `h${events++}`));
      }
      for (const [key, list] of byKey) messages.push({ key, value: codec.encode({ events: list }) });
      // Slices in order within one send keep each partition in time order; sends are awaited in turn.
      if (messages.length >= 500) await flush();
      done += Math.min(SLICE_MS, to - t);
      onProgress?.(done / total);
    }
  }
  await flush();
  return events;
}
