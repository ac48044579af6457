/**
 * One ceiling drain in a process of its own, so that it starts as cold as the service
 * it is compared with and its heap holds nothing but the consumer (not the preload's
 * garbage). Run by runCeilingProcess; prints its DrainResult as JSON on stdout.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseBrokers } from '@banstream/kafka';
import { SCHEMA_NAMES, loadSchemaCatalog } from '@banstream/schemas';
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
  return new Promise((resolve, reject) => {
    // Like the service, without the caller's NODE_OPTIONS: both run on node's defaults.
    const { NODE_OPTIONS: _ignored, ...env } = process.env;
    const child = spawn(process.execPath, ['--import', 'tsx', SELF], {
      env: { ...env, BENCH_CEILING_JOB: JSON.stringify(job) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0) return reject(new Error(`ceiling process exited with ${code ?? signal}: ${out}`));
      try {
        resolve(JSON.parse(line) as DrainResult);
      } catch {
        reject(new Error(`ceiling process printed no result: ${out}`));
      }
    });
  });
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
