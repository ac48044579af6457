/**
 * One ceiling drain in a process of its own, so that it starts as cold as the service
 * it is compared with and its heap holds nothing but the consumer (not the preload's
 * garbage). Run by runCeilingProcess; prints its DrainResult as JSON on stdout.
 */
import { fileURLToPath } from 'node:url';
import { parseBrokers } from '@banstream/kafka';
import { SCHEMA_NAMES, loadSchemaCatalog } from '@banstream/schemas';
import { runJsonChild } from '../lib.js';
import { benchKafka, drainWithKafkajs, type BenchSecurity, type DrainResult, type DrainShare } from './kafka.js';

export interface CeilingJob {
  brokers: string;
  topic: string;
  groupId: string;
  /** Events to count, or records when `decode` is false. */
  total: number;
  timeoutMs: number;
  decode: boolean;
  share?: DrainShare;
  /** Over a secured listener (bench --secure). */
  security?: BenchSecurity;
}

const SELF = fileURLToPath(import.meta.url);

export function runCeilingProcess(job: CeilingJob): Promise<DrainResult> {
  return runJsonChild<DrainResult>(SELF, 'BENCH_CEILING_JOB', job);
}

/**
 * `consumers` ceiling processes side by side, each draining its share of the
 * partitions in a group of its own: the ceiling of as many aggregator workers.
 * Timed from the first one's first batch to the last one's end.
 */
export async function runParallelCeiling(job: Omit<CeilingJob, 'share'>, consumers: number): Promise<DrainResult> {
  const parts = await Promise.all(Array.from({ length: consumers }, (_, index) => runCeilingProcess({ ...job, groupId: `${job.groupId}-${index}`, share: { index, of: consumers } })));
  const startedAt = Math.min(...parts.map((p) => p.startedAt));
  const endedAt = Math.max(...parts.map((p) => p.endedAt));
  return { events: parts.reduce((sum, p) => sum + p.events, 0), ms: endedAt - startedAt, timedOut: parts.some((p) => p.timedOut), startedAt, endedAt };
}

async function child(job: CeilingJob): Promise<void> {
  const codec = loadSchemaCatalog().codec(SCHEMA_NAMES.requestEventBatch);
  const kafka = benchKafka(parseBrokers(job.brokers), `bench-aggregator-ceiling`, job.security);
  const result = await drainWithKafkajs(kafka, job.topic, job.groupId, codec, job.total, job.timeoutMs, job.decode, job.share);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

const raw = process.env.BENCH_CEILING_JOB;
if (raw !== undefined && process.argv[1] === SELF) await child(JSON.parse(raw) as CeilingJob);
