/**
 * One enforcer instance for the hard-limit exactness test, as its own process with
 * its own ioredis client and limiter. Started with the Redis URL and key prefix,
 * it says "ready"; then each line on stdin is a task (JSON), run at once, so tasks
 * written to several workers together make them compete; it answers each with
 * what was decided, as one JSON line. It ends when stdin closes.
 */
import { createInterface } from 'node:readline';
import { createLogger, createMetricsRegistry, createRedis } from '@banstream/platform';
import { createHardLimiter, type HardLimitPolicy } from '../../services/enforcer/src/hard/index.js';

export interface WorkerTask {
  policy: HardLimitPolicy;
  subject: string;
  attempts: number;
  /** Checks in flight at once. */
  wave: number;
  /** Epoch ms to start at: a worker that reads its task first must not finish before the others begin. */
  startAt?: number;
}

export interface WorkerResult {
  admitted: number;
  denied: number;
  failMode: number;
}

const [redisUrl = '', keyPrefix = ''] = process.argv.slice(2);
const logger = createLogger({ service: 'hard-limit-worker', level: 'warn', destination: process.stderr });
const redis = createRedis({ url: redisUrl, logger });
await redis.connect();
// Exactness is the question here, not latency: a generous timeout keeps CPU contention from handing decisions to the failure mode.
const limiter = createHardLimiter({ redis, logger, registry: createMetricsRegistry('worker', { defaultMetrics: false }), keyPrefix, timeoutMs: 2_000 });

async function run(task: WorkerTask): Promise<WorkerResult> {
  const result: WorkerResult = { admitted: 0, denied: 0, failMode: 0 };
  const wait = (task.startAt ?? 0) - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  for (let done = 0; done < task.attempts; done += task.wave) {
    const size = Math.min(task.wave, task.attempts - done);
    const decisions = await Promise.all(Array.from({ length: size }, () => limiter.check([{ policy: task.policy, subject: task.subject }], Date.now())));
    for (const [candidate] of decisions) {
      if (candidate!.source === 'fail-mode') result.failMode++;
      else if (candidate!.deny) result.denied++;
      else result.admitted++;
    }
  }
  return result;
}

process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  process.stdout.write(`${JSON.stringify(await run(JSON.parse(line) as WorkerTask))}\n`);
}
limiter.close();
redis.disconnect();
