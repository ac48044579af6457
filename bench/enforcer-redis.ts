/**
 * Redis hard-limit checks per second, against `redis-benchmark -P 16` running
 * EVALSHA of the same script in the same run (the ceiling), on a redis-server this
 * benchmark starts on a free port (nothing else talks to it).
 *
 * - redis_checks_per_s: check() throughput of the hard limiter (sliding window,
 *   the default algorithm), `concurrency` checks in flight over `keys` subjects
 *   (about as many as redis-benchmark's 50 clients × 16); the limiter coalesces
 *   the checks of one event-loop turn into script calls of up to `maxBatch`.
 * - redis_uncoalesced_checks_per_s: the same with coalescing off (one EVALSHA per
 *   check, auto-pipelined), for comparison.
 * - redis_ceiling_per_s: redis-benchmark, 50 clients, pipelines of 16, one check
 *   per EVALSHA over the same key space.
 * - redis_check_p50_ms, redis_check_p99_ms: check() latency under light load
 *   (`latencyConcurrency` in flight), measured after the throughput runs:
 *   latencies at saturation only measure the queue.
 * Throughput figures are medians of `runs` interleaved runs; the ratios are
 * medians of each run's own ratio (its ceiling and limiter runs back to back),
 * which cancels most of the drift of a shared machine.
 *
 * Part of `npm run bench -- enforcer`; standalone: `npx tsx bench/enforcer-redis.ts`.
 */
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createLogger, createMetricsRegistry, createRedis, type Redis } from '@banstream/platform';
import { ALGORITHM_TAG, createHardLimiter, hardLimitKey, hardLimitScript, type HardLimitPolicy } from '../services/enforcer/src/hard/index.js';
import { startPrivateRedis } from '../test/support/private-redis.js';
import { median, note, percentile, prng, report, sig, type Figures } from './lib.js';

export interface EnforcerRedisParams {
  keys: number;
  concurrency: number;
  latencyConcurrency: number;
  durationMs: number;
  runs: number;
  ceilingRequests: number;
  maxBatch: number;
  timeoutMs: number;
}

const DEFAULTS: EnforcerRedisParams = {
  keys: 100_000,
  concurrency: 1_024,
  latencyConcurrency: 32,
  durationMs: 2_000,
  runs: 5,
  ceilingRequests: 150_000,
  maxBatch: 128,
  // Far above the 5 ms default: this measures throughput; a queue of checks on a loaded machine must not trip the failure modes.
  timeoutMs: 5_000,
};

const KEY_PREFIX = 'bench:';
/** Never reached: every check is admitted and written, the costlier path. */
const POLICY: HardLimitPolicy = {
  id: 'bench',
  mode: 'enforce',
  threshold: { count: 1_000_000_000, intervalMs: 60_000 },
  action: { type: 'throttle', status: 429 },
  enforcement: { type: 'hard', failureMode: 'open', algorithm: 'sliding-window' },
};

interface LoadRun {
  checksPerSecond: number;
  failMode: number;
  latenciesMs: number[];
}

async function runLoad(redis: Redis, params: EnforcerRedisParams, concurrency: number, maxBatch: number, seed: number): Promise<LoadRun> {
  const logger = createLogger({ service: 'bench', level: 'warn' });
  const limiter = createHardLimiter({ redis, logger, registry: createMetricsRegistry('bench', { defaultMetrics: false }), keyPrefix: KEY_PREFIX, timeoutMs: params.timeoutMs, maxBatch });
  await limiter.warmUp();
  const random = prng(seed);
  const subjects = Array.from({ length: params.keys }, (_, i) => `ip:${i}`);
  const latenciesMs: number[] = [];
  let decided = 0;
  let failMode = 0;
  const started = performance.now();
  const deadline = started + params.durationMs;
  const client = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const subject = subjects[Math.floor(random() * subjects.length)]!;
      const t = performance.now();
      const [candidate] = await limiter.check([{ policy: POLICY, subject }], Date.now());
      latenciesMs.push(performance.now() - t);
      if (candidate!.source === 'hard-limit') decided++;
      else failMode++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  const elapsed = performance.now() - started;
  limiter.close();
  return { checksPerSecond: (decided / elapsed) * 1000, failMode, latenciesMs };
}

/** redis-benchmark's own figure for EVALSHA of the script, one sliding-window check per call, pipelined 16 deep. */
function runCeiling(port: number, sha: string, params: EnforcerRedisParams): number {
  const key = hardLimitKey(KEY_PREFIX, POLICY.id, 'sliding-window', 'ip:__rand_int__');
  const args = ['-p', String(port), '-P', '16', '-n', String(params.ceilingRequests), '-r', String(params.keys), '--csv'];
  const command = ['evalsha', sha, '1', key, '0', ALGORITHM_TAG['sliding-window'], String(POLICY.threshold.count), String(POLICY.threshold.intervalMs), '1'];
  const csv = execFileSync('redis-benchmark', [...args, ...command], { encoding: 'utf8' });
  // "test","rps",... then one row per test.
  const row = csv.trim().split('\n').at(-1)!.split('","');
  const rps = Number(row[1]);
  if (!Number.isFinite(rps) || rps <= 0) throw new Error(`could not read requests per second from redis-benchmark:\n${csv}`);
  return rps;
}

export async function measureEnforcerRedis(overrides: Partial<EnforcerRedisParams> = {}): Promise<{ params: EnforcerRedisParams; figures: Figures }> {
  const params = { ...DEFAULTS, ...overrides };
  const server = await startPrivateRedis();
  const redis = createRedis({ url: server.url, logger: createLogger({ service: 'bench', level: 'warn' }) });
  try {
    await redis.connect();
    const sha = (await redis.script('LOAD', hardLimitScript().source)) as string;
    const coalesced: LoadRun[] = [];
    const uncoalesced: LoadRun[] = [];
    const ceiling: number[] = [];
    for (let run = 0; run < params.runs; run++) {
      note(`enforcer-redis run ${run + 1}/${params.runs}: redis-benchmark ceiling`);
      ceiling.push(runCeiling(server.port, sha, params));
      note(`enforcer-redis run ${run + 1}/${params.runs}: limiter, coalesced (max ${params.maxBatch} per call)`);
      coalesced.push(await runLoad(redis, params, params.concurrency, params.maxBatch, 3 * run + 1));
      note(`enforcer-redis run ${run + 1}/${params.runs}: limiter, one call per check`);
      uncoalesced.push(await runLoad(redis, params, params.concurrency, 1, 3 * run + 2));
    }
    note(`enforcer-redis: latency under light load (${params.latencyConcurrency} in flight)`);
    const light = await runLoad(redis, params, params.latencyConcurrency, params.maxBatch, 3 * params.runs);
    const ratio = (runs: LoadRun[]): number => median(runs.map((r, i) => r.checksPerSecond / ceiling[i]!));
    const figures: Figures = {
      redis_checks_per_s: sig(median(coalesced.map((r) => r.checksPerSecond))),
      redis_ceiling_per_s: sig(median(ceiling)),
      redis_ratio: sig(ratio(coalesced), 3),
      redis_uncoalesced_checks_per_s: sig(median(uncoalesced.map((r) => r.checksPerSecond))),
      redis_uncoalesced_ratio: sig(ratio(uncoalesced), 3),
      redis_check_p50_ms: sig(percentile(light.latenciesMs, 50), 3),
      redis_check_p99_ms: sig(percentile(light.latenciesMs, 99), 3),
      redis_light_load_checks_per_s: sig(light.checksPerSecond),
      redis_fail_mode_checks: [...coalesced, ...uncoalesced, light].reduce((n, r) => n + r.failMode, 0),
    };
    return { params, figures };
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { params, figures } = await measureEnforcerRedis();
  report('enforcer-redis', { ...params }, figures);
}
