/**
 * What the soak measures every few seconds: a process's resident memory, a service's
 * Prometheus metrics, and a consumer group's lag from the broker's offsets.
 */
import { readFileSync } from 'node:fs';
import type { Admin } from '@banstream/kafka';
import { metricSum } from '../aggregator/service.js';

/** VmRSS of a live process in bytes; undefined once it is gone. */
export function rssBytes(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** A service's /metrics text, or undefined when it does not answer within 3 s. */
export async function scrape(port: number): Promise<string | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(3_000) });
    return res.ok ? await res.text() : undefined;
  } catch {
    return undefined;
  }
}

/** metricSum that reads an absent metric as 0. */
export const metric = (text: string | undefined, name: string): number => (text === undefined ? 0 : (metricSum(text, name) ?? 0));

/**
 * Records between a group's committed offsets and the high watermarks of a topic,
 * summed over partitions. A partition the group has not committed yet counts from
 * its low watermark (everything in it is still to be read).
 */
export async function groupLag(admin: Admin, groupId: string, topic: string): Promise<number> {
  const [committed, ends] = await Promise.all([admin.fetchOffsets({ groupId, topics: [topic] }), admin.fetchTopicOffsets(topic)]);
  const byPartition = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
  let lag = 0;
  for (const end of ends) {
    const done = byPartition.get(end.partition) ?? -1;
    lag += Math.max(0, Number(end.high) - (done < 0 ? Number(end.low) : done));
  }
  return lag;
}
