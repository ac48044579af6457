/**
 * Kafka side of the aggregator benchmark: the run's topics, the preload, the policies,
 * the bare-kafkajs ceiling and the clean-up.
 */
import { createRequire } from 'node:module';
// The bare kafkajs the ceilings measure, loaded at first use (after installKafkaPatches()), not at import.
import type * as Kafkajs from 'kafkajs';
import type { Admin, Kafka, LogEntry, Message } from 'kafkajs';
import { validatePolicyDocument, type PolicySpec } from '@banstream/core';
import { ensureTopics, installKafkaPatches, topicFullName, topicSpecs, type TopicName } from '@banstream/kafka';
import { SCHEMA_NAMES, type Codec, type PolicyRecord, type RequestEventBatch, type SchemaCatalog } from '@banstream/schemas';
import { note } from '../lib.js';
import type { EventSet } from './events.js';

/** A ceiling's login on a secured listener (bench --secure): the CA's PEM and a SCRAM-SHA-512 user. */
export interface BenchSecurity {
  ca: string;
  username: string;
  password: string;
}

/** The benchmarks' own client; its ceilings get the services' kafkajs fixes too, so no ratio gains from them. */
export function benchKafka(brokers: string[], clientId: string, security?: BenchSecurity): Kafka {
  installKafkaPatches();
  const { Kafka, logLevel } = kafkajs();
  const names = ['NOTHING', 'ERROR', 'WARN', 'INFO', 'DEBUG'];
  return new Kafka({
    clientId,
    brokers,
    ...(security === undefined
      ? {}
      : { ssl: { ca: [security.ca], rejectUnauthorized: true }, sasl: { mechanism: 'scram-sha-512' as const, username: security.username, password: security.password } }),
    logLevel: logLevel.WARN,
    // stdout carries the result line only: kafkajs logs go to stderr.
    logCreator:
      () =>
      ({ namespace, level, log }: LogEntry) => {
        const { message, timestamp: _t, logger: _l, ...rest } = log;
        // Errors kafkajs retries (a partition leader or a group coordinator not ready just
        // after topic creation) are logged twice, by the connection and with a retryCount;
        // what really fails reaches the benchmark as an exception.
        if (namespace === 'Connection' || (rest as { retryCount?: number }).retryCount !== undefined) return;
        note(`kafkajs ${names[level] ?? level} ${namespace}: ${message} ${JSON.stringify(rest)}`);
      },
  });
}

const kafkajs = () => createRequire(import.meta.url)('kafkajs') as typeof Kafkajs;

export const PARTITIONS = 12;

export async function createTopics(admin: Admin, prefix: string, longestWindowMs: number): Promise<void> {
  await ensureTopics(admin, topicSpecs({ prefix, partitions: PARTITIONS, replicationFactor: 1, longestWindowMs }));
}

/** Topics a run of the service reads back what an earlier run wrote to: recreated empty before each run. */
const KEPT_ACROSS_RUNS = new Set<TopicName>(['events', 'policies']);

/**
 * Every topic but the preloaded events and the policies, deleted and created again
 * empty. Otherwise a run would read what the runs before it wrote: their repartition
 * entries (applied again, its own then dropped as duplicates, more work each run),
 * their bans and their geographic baselines.
 */
export async function freshOutputTopics(admin: Admin, prefix: string, longestWindowMs: number): Promise<void> {
  const kept = new Set([...KEPT_ACROSS_RUNS].map((t) => topicFullName(prefix, t)));
  const stale = (await admin.listTopics()).filter((t) => t.startsWith(prefix) && !kept.has(t));
  if (stale.length > 0) await admin.deleteTopics({ topics: stale, timeout: 30_000 });
  for (let attempt = 1; ; attempt++) {
    const left = (await admin.listTopics()).filter((t) => stale.includes(t));
    if (left.length === 0) {
      try {
        await createTopics(admin, prefix, longestWindowMs);
        return;
      } catch (error) {
        // A deleted topic can stay "marked for deletion" for a moment after it is no longer listed.
        if (attempt >= 60) throw error;
      }
    } else if (attempt >= 60) {
      throw new Error(`topics still there 30 s after their deletion: ${left.join(', ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Every topic of the run, also those a service created for itself under the prefix. */
export async function deleteTopics(admin: Admin, prefix: string): Promise<string[]> {
  const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
  if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
  return topics;
}

/** Every consumer group under the prefix: the benchmark's and those the service derives from its group id. */
export async function deleteGroups(admin: Admin, prefix: string): Promise<string[]> {
  const groupIds = (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.startsWith(prefix));
  if (groupIds.length === 0) return [];
  try {
    await admin.deleteGroups(groupIds);
  } catch (error) {
    note(`could not delete consumer groups ${groupIds.join(', ')}: ${(error as Error).message}`);
  }
  return groupIds;
}

export interface PreloadResult {
  events: number;
  records: number;
  bytes: number;
  ms: number;
}

/**
 * Encodes every batch and produces it keyed by its prefix (acks -1, no compression),
 * SEND_RECORDS records per request and IN_FLIGHT requests at once.
 */
export async function preload(kafka: Kafka, topic: string, set: EventSet, codec: Codec<RequestEventBatch>): Promise<PreloadResult> {
  const SEND_RECORDS = 8; // 8 × ~80 kB: below the broker's 1 MB per partition batch even if all share a partition
  const IN_FLIGHT = 8;
  const producer = kafka.producer({ createPartitioner: kafkajs().Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
  let next = 0;
  let events = 0;
  let bytes = 0;
  const t0 = performance.now();
  let lastNote = t0;
  const worker = async (): Promise<void> => {
    while (next < set.batches.length) {
      const messages: Message[] = [];
      for (const batch of set.batches.slice(next, next + SEND_RECORDS)) {
        const value = codec.encode(set.batchValue(batch));
        events += batch.events.length;
        bytes += value.length;
        messages.push({ key: batch.key, value });
      }
      next += SEND_RECORDS;
      await producer.send({ topic, acks: -1, messages });
      if (performance.now() - lastNote > 5_000) {
        lastNote = performance.now();
        note(`preload: ${events.toLocaleString('en')} events`);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  } finally {
    await producer.disconnect();
  }
  return { events, records: set.batches.length, bytes, ms: performance.now() - t0 };
}

export const BENCH_POLICIES: PolicySpec[] = [
  {
    id: 'bench-ip-ban',
    description: 'Benchmark: requests per IP; bans above 1000 a minute.',
    key: ['ip'],
    threshold: { count: 1000, interval: '1m' },
    action: { type: 'ban', banDuration: '10m', status: 403 },
  },
  {
    id: 'bench-user-throttle',
    description: 'Benchmark: requests per user; throttles above 300 a minute.',
    key: ['user'],
    threshold: { count: 300, interval: '1m' },
    action: { type: 'throttle', status: 429 },
  },
  {
    // The longest window of the set: the aggregator replays about this far back, so
    // the whole preload stays in reach for the length of the benchmark.
    id: 'bench-country-alert',
    description: 'Benchmark: requests per country; alerts above 200k in 10 minutes.',
    key: ['country'],
    threshold: { count: 200_000, interval: '10m' },
    action: { type: 'alert' },
  },
];
export const LONGEST_WINDOW_MS = 10 * 60_000;

/** The costs mode's policies: the same, the per-IP ban weighing a login at 10 whatever the event's own cost. */
export const BENCH_COST_POLICIES: PolicySpec[] = BENCH_POLICIES.map((p) => (p.id === 'bench-ip-ban' ? { ...p, costs: [{ methods: ['POST'], paths: ['/login'], cost: 10 }] } : p));

/** Publishes policies (default BENCH_POLICIES; enforce, enabled, version 1) to the policies topic. */
export async function publishPolicies(kafka: Kafka, prefix: string, catalog: SchemaCatalog, specs: readonly PolicySpec[] = BENCH_POLICIES): Promise<void> {
  const checked = validatePolicyDocument({ policies: specs.map((p) => ({ ...p, mode: 'enforce' })) });
  if (!checked.ok) throw new Error(`benchmark policies are invalid: ${JSON.stringify(checked.errors)}`);
  const codec = catalog.codec(SCHEMA_NAMES.policy);
  const now = Date.now();
  const messages = specs.map((spec): Message => {
    const record: PolicyRecord = {
      id: spec.id,
      version: 1,
      description: spec.description ?? '',
      owner: 'bench',
      mode: 'enforce',
      enabled: true,
      definition: JSON.stringify(spec),
      updatedBy: 'bench',
      updatedAt: now,
    };
    return { key: spec.id, value: codec.encode(record) };
  });
  const producer = kafka.producer({ createPartitioner: kafkajs().Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
  try {
    await producer.send({ topic: topicFullName(prefix, 'policies'), acks: -1, messages });
  } finally {
    await producer.disconnect();
  }
}

/** What the ceiling consumer asks per fetch (kafkajs defaults: 1 MiB and 10 MiB). */
export const CEILING_FETCH = { maxBytesPerPartition: 1_048_576, maxBytes: 10_485_760, partitionsConsumedConcurrently: 1 };

export interface DrainResult {
  events: number;
  ms: number;
  timedOut: boolean;
  /** Wall-clock times (ms since the epoch, fractional) of the first batch and of the end, to line up parallel drains. */
  startedAt: number;
  endedAt: number;
}

/** A consumer's part of a parallel drain: the partitions p with p % of === index. */
export interface DrainShare {
  index: number;
  of: number;
}

/**
 * The ceiling: a bare kafkajs consumer in a fresh group reads the topic from the
 * beginning, decodes every record with the batch codec and counts the events. Timed
 * from its first batch to the batch that reaches `total`; no commits. With a share, it reads
 * only its partitions (the others paused as soon as it joins) and ends when each of
 * them reaches its high watermark, `total` unused: n such consumers side by side
 * are the ceiling of n aggregator workers.
 */
export async function drainWithKafkajs(
  kafka: Kafka,
  topic: string,
  groupId: string,
  codec: Codec<RequestEventBatch>,
  total: number,
  timeoutMs: number,
  /** Without decoding, `total` counts records: how fast kafkajs alone fetches. */
  decode = true,
  share?: DrainShare,
): Promise<DrainResult> {
  const consumer = kafka.consumer({
    groupId,
    maxBytesPerPartition: CEILING_FETCH.maxBytesPerPartition,
    maxBytes: CEILING_FETCH.maxBytes,
    maxWaitTimeInMs: 500,
  });
  let events = 0;
  let t0 = 0;
  let t1 = 0;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const mine = (p: number) => share === undefined || p % share.of === share.index;
  const unfinished = new Set<number>();
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    if (share) {
      const admin = kafka.admin();
      await admin.connect();
      const offsets = await admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
      for (const o of offsets) if (mine(o.partition) && o.high !== '0') unfinished.add(o.partition);
      consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
        const others = (payload.memberAssignment[topic] ?? []).filter((p) => !mine(p));
        if (others.length > 0) consumer.pause([{ topic, partitions: others }]);
      });
    }
    await consumer.run({
      autoCommit: false,
      partitionsConsumedConcurrently: CEILING_FETCH.partitionsConsumedConcurrently,
      eachBatch: async ({ batch }) => {
        if (!mine(batch.partition)) return;
        if (t0 === 0) t0 = performance.now();
        if (decode) {
          for (const message of batch.messages) {
            if (message.value !== null) events += codec.decode(message.value).events.length;
          }
        } else {
          events += batch.messages.length;
        }
        if (share && Number(batch.lastOffset()) + 1 >= Number(batch.highWatermark)) unfinished.delete(batch.partition);
        const done = share ? unfinished.size === 0 : events >= total;
        if (done && t1 === 0) {
          t1 = performance.now();
          finish();
        }
      },
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([finished.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)))]);
    clearTimeout(timer);
    const end = timedOut ? performance.now() : t1;
    return { events, ms: end - t0, timedOut, startedAt: performance.timeOrigin + t0, endedAt: performance.timeOrigin + end };
  } finally {
    await consumer.disconnect();
  }
}
