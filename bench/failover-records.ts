import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { endOffsets, type Admin, type Kafka } from '@banstream/kafka';

/** The failover benchmark's reads of its cluster (leaders, whole topics) and its per-flood timings file. */

/** Each partition's leader and how many replicas are in sync. */
export async function leaders(admin: Admin, topics: string[]): Promise<{ topic: string; partition: number; leader: number; isr: number }[]> {
  const { topics: meta } = await admin.fetchTopicMetadata({ topics });
  return meta.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionId, leader: p.leader, isr: p.isr.length })));
}

/** Every record of the topic from the start to its current end, decoded by `read`. */
export async function readTopic(kafka: Kafka, admin: Admin, topic: string, read: (value: Buffer, timestamp: number, key: string) => void): Promise<void> {
  // Retrying "not the leader" and the like: the restarted broker may take leaderships back meanwhile.
  const ends = await endOffsets(admin, topic);
  const remaining = new Map(ends.filter((e) => Number(e.high) > Number(e.low)).map((e) => [e.partition, Number(e.high)]));
  if (remaining.size === 0) return;
  const consumer = kafka.consumer({ groupId: `bench-failover-read-${randomUUID()}`, maxWaitTimeInMs: 50 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let done: () => void = () => undefined;
  const finished = new Promise<void>((r) => (done = r));
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      if (message.value) read(message.value, Number(message.timestamp), message.key?.toString() ?? '');
      if (Number(message.offset) + 1 >= (remaining.get(partition) ?? 0)) remaining.delete(partition);
      if (remaining.size === 0) done();
    },
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([finished, new Promise((r) => (timer = setTimeout(r, 120_000)))]);
  clearTimeout(timer);
  await consumer.disconnect();
  if (remaining.size > 0) throw new Error(`reading ${topic} did not reach its end within 120 s`);
}

/** When each flood was posted, answered, its event and ban written, and denied by each enforcer (`${url} ${ip}`), wall-clock ms. */
export interface FloodTimes {
  postedAt: Map<string, number>;
  answeredAt: Map<string, number>;
  eventWritten: Map<string, number>;
  banWritten: Map<string, number>;
  deniedAt: Map<string, number>;
  enforcerUrls: string[];
}

/**
 * BENCH_FLOODS_FILE: the floods before the kill (`"calm": true`, in ms from each one's own
 * post: where the ceiling's time goes), then each flood of the failover, in ms from the kill.
 */
export function writeFloodsFile(file: string, calmIps: string[], failoverIps: string[], killedAtWall: number, t: FloodTimes): void {
  const line = (ip: string, from: number) => {
    const since = (at: number | undefined) => (at === undefined ? null : at - from);
    return {
      answered: since(t.answeredAt.get(ip)),
      event_written: since(t.eventWritten.get(ip)),
      ban_written: since(t.banWritten.get(`ip:${ip}`)),
      denied: t.enforcerUrls.map((url) => since(t.deniedAt.get(`${url} ${ip}`))),
    };
  };
  const calm = calmIps.map((ip) => ({ ip, calm: true, ...line(ip, t.postedAt.get(ip)!) }));
  const failover = failoverIps.map((ip) => ({ ip, posted: (t.postedAt.get(ip) ?? Number.NaN) - killedAtWall, ...line(ip, killedAtWall) }));
  writeFileSync(file, `${[...calm, ...failover].map((l) => JSON.stringify(l)).join('\n')}\n`);
}
