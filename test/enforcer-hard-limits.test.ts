import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createMetricsRegistry, createRedis, type Redis } from '@banstream/platform';
import type { HardAlgorithm } from '@banstream/core';
import { ALGORITHM_TAG, createHardLimiter, hardLimitKey, hardLimitScript, type HardLimitPolicy } from '../services/enforcer/src/hard/index.js';
import { emptyCounts, slidingWindowHit } from '../services/enforcer/src/hard/window-math.js';
import { captureLogger, testInfra, uniqueName } from './support/infra.js';
import { REPO_ROOT } from './support/processes.js';
import type { WorkerResult, WorkerTask } from './support/hard-limit-worker.js';

const prefix = `${uniqueName('hard')}:`;
let redis: Redis;

beforeAll(async () => {
  redis = createRedis({ url: testInfra().redisUrl, logger: captureLogger().logger });
  await redis.connect();
});

afterAll(async () => {
  // Only our own keys: the Redis is shared, never flush it.
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

/** Runs one batch at a fixed time (ARGV[1]); returns one [allowed, remaining, retryAfterMs] per check. Cost 1 unless given. */
async function runAt(algorithm: HardAlgorithm, nowMs: number, checks: [key: string, a: number, b: number, cost?: number | string][]): Promise<(number | string)[][]> {
  const args = checks.flatMap(([, a, b, cost]) => [ALGORITHM_TAG[algorithm], a, b, cost ?? 1]);
  const flat = (await redis.eval(hardLimitScript().source, checks.length, ...checks.map(([k]) => k), nowMs, ...args)) as (number | string)[];
  return checks.map((_, i) => flat.slice(3 * i, 3 * i + 3));
}

const T0 = 1_800_000_000_000; // a multiple of every interval used below

describe('hard-limit scripts on the real Redis, at fixed times', () => {
  it('sliding window: makes the same decisions as the in-process window of the local failure mode', async () => {
    const key = `${prefix}mirror:{ip:192.0.2.1}`;
    const counts = emptyCounts();
    const intervalMs = 10_000;
    let now = T0;
    let seed = 7;
    const random = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let step = 0; step < 300; step++) {
      now += Math.floor(random() * random() * 1.5 * intervalMs);
      const [reply] = await runAt('sliding-window', now, [[key, 6, intervalMs]]);
      const local = slidingWindowHit(counts, 6, intervalMs, now);
      expect(reply, `step ${step} at +${now - T0} ms`).toEqual([local.allowed ? 1 : 0, local.remaining, local.retryAfterMs]);
    }
  });

  it('sliding window: keeps two windows of counts in one string that expires when the window after the last admit ends', async () => {
    const key = `${prefix}sw:{ip:192.0.2.2}`;
    const replies = await runAt('sliding-window', T0 + 1_000, [
      [key, 3, 60_000],
      [key, 3, 60_000],
      [key, 3, 60_000],
      [key, 3, 60_000],
    ]);
    expect(replies).toEqual([
      [1, 2, 0],
      [1, 1, 0],
      [1, 0, 0],
      [0, 0, 59_000 + 20_000],
    ]);
    expect(await redis.get(key)).toBe(`${T0 / 60_000}:3:0`);
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(119_000 - 1_000);
    expect(ttl).toBeLessThanOrEqual(119_000);
  });

  it('sliding log: exact over the interval; retry after is when the blocking entry ages out', async () => {
    const key = `${prefix}sl:{user:7}`;
    for (const [offset, expected] of [
      [0, [1, 2, 0]],
      [10, [1, 1, 0]],
      [20, [1, 0, 0]],
      [30, [0, 0, 970]],
      [999, [0, 0, 1]],
      [1_000, [1, 0, 0]],
    ] as const) {
      expect(await runAt('sliding-log', T0 + offset, [[key, 3, 1_000]])).toEqual([expected]);
    }
    // Three requests in the window, and the log's running total of their costs.
    expect(await redis.zcard(key)).toBe(3 + 1);
    expect(await redis.zscore(key, '#total')).toBe('-3');
    // Set to the 1 s interval a few round trips ago (a loaded machine takes some of it).
    expect(await redis.pttl(key)).toBeGreaterThan(500);
  });

  it('token bucket (GCRA): admits a burst, then one per emission interval; retry after is the wait for one token', async () => {
    const key = `${prefix}tb:{apikey:abc}`;
    const burst = await runAt('token-bucket', T0, [
      [key, 3, 100],
      [key, 3, 100],
      [key, 3, 100],
      [key, 3, 100],
    ]);
    expect(burst).toEqual([
      [1, 2, 0],
      [1, 1, 0],
      [1, 0, 0],
      [0, 0, 100],
    ]);
    expect(await runAt('token-bucket', T0 + 50, [[key, 3, 100]])).toEqual([[0, 0, 50]]);
    expect(await runAt('token-bucket', T0 + 100, [[key, 3, 100]])).toEqual([[1, 0, 0]]);
    // Idle long enough to refill completely: the key is gone and the bucket full.
    expect(await redis.pttl(key)).toBeLessThanOrEqual(300);
    expect(await runAt('token-bucket', T0 + 10_000, [[key, 3, 100]])).toEqual([[1, 2, 0]]);
  });

  it('runs checks of different algorithms in one batch; an unknown algorithm fails its own check', async () => {
    const keys = ['sw', 'sl', 'tb', 'xx'].map((tag) => `${prefix}mixed:${tag}:{user:9}`);
    const flat = (await redis.eval(hardLimitScript().source, 4, ...keys, T0, 'sw', 2, 1_000, 1, 'sl', 2, 1_000, 1, 'tb', 2, 500, 1, 'xx', 1, 1, 1)) as (number | string)[];
    expect(flat.slice(0, 9)).toEqual([1, 1, 0, 1, 1, 0, 1, 1, 0]);
    expect(flat.slice(9)).toEqual([-1, expect.stringMatching(/unknown algorithm xx/), 0]);
  });

  it('costs: each algorithm admits a request whole for its cost or not at all, and a cost over the limit never', async () => {
    const sw = `${prefix}cost-sw:{ip:192.0.2.9}`;
    // Limit 10 per minute: 5 + 5 fill it, 1 more is refused; remaining counts cost units.
    expect(
      await runAt('sliding-window', T0, [
        [sw, 10, 60_000, 5],
        [sw, 10, 60_000, 5],
        [sw, 10, 60_000, 1],
      ]),
    ).toEqual([
      [1, 5, 0],
      [1, 0, 0],
      [0, 0, 60_000 + 6_000],
    ]);
    expect(await redis.get(sw)).toBe(`${T0 / 60_000}:10:0`);
    expect(await runAt('sliding-window', T0, [[`${sw}2`, 10, 60_000, 11]])).toEqual([[0, 0, 60_000]]);

    const sl = `${prefix}cost-sl:{user:9}`;
    expect(await runAt('sliding-log', T0, [[sl, 5, 1_000, 3]])).toEqual([[1, 2, 0]]);
    expect(await runAt('sliding-log', T0 + 10, [[sl, 5, 1_000, 3]])).toEqual([[0, 0, 990]]);
    expect(await runAt('sliding-log', T0 + 10, [[sl, 5, 1_000, 2]])).toEqual([[1, 0, 0]]);
    // One entry per request, whatever its cost, and the total of their costs.
    expect(await redis.zcard(sl)).toBe(2 + 1);
    expect(await redis.zscore(sl, '#total')).toBe('-5');
    expect(await runAt('sliding-log', T0 + 20, [[sl, 5, 1_000, 6]])).toEqual([[0, 0, 1_000]]);
    // The first entry (cost 3) ages out: its cost leaves the total.
    expect(await runAt('sliding-log', T0 + 1_000, [[sl, 5, 1_000, 3]])).toEqual([[1, 0, 0]]);
    expect(await redis.zscore(sl, '#total')).toBe('-5');

    // A costly request is one entry and a handful of commands, not one per unit of cost.
    const big = `${prefix}cost-sl-big:{user:10}`;
    const before = await zaddCalls();
    expect(await runAt('sliding-log', T0, [[big, 1_000_000, 60_000, 1_000_000]])).toEqual([[1, 0, 0]]);
    expect((await zaddCalls()) - before).toBeLessThanOrEqual(2);
    expect(await redis.zcard(big)).toBe(2);
    expect(await runAt('sliding-log', T0 + 1, [[big, 1_000_000, 60_000, 1]])).toEqual([[0, 0, 59_999]]);

    const tb = `${prefix}cost-tb:{apikey:c}`;
    expect(
      await runAt('token-bucket', T0, [
        [tb, 10, 100, 4],
        [tb, 10, 100, 6],
        [tb, 10, 100, 2],
      ]),
    ).toEqual([
      [1, 6, 0],
      [1, 0, 0],
      [0, 0, 200],
    ]);
    expect(await runAt('token-bucket', T0, [[`${tb}2`, 10, 100, 11]])).toEqual([[0, 0, 1_000]]);
  });

  it('refuses a cost that is not a whole number from 1 to 1000000, in its own check only', async () => {
    const key = `${prefix}badcost:{x}`;
    const replies = await runAt('sliding-window', T0, [
      [key, 5, 1_000, 0],
      [key, 5, 1_000, 1.5],
      [key, 5, 1_000, 1_000_001],
      [key, 5, 1_000, 'x'],
      [key, 5, 1_000, 1],
    ]);
    for (const r of replies.slice(0, 4)) expect(r).toEqual([-1, expect.stringMatching(/cost must be a whole number from 1 to 1000000/), 0]);
    expect(replies[4]).toEqual([1, 4, 0]);
  });

  it('a key of the wrong type fails its own check only, with the error text', async () => {
    const bad = `${prefix}wrongtype:{x}`;
    await redis.rpush(bad, 'not a counter');
    const replies = await runAt('sliding-window', T0, [
      [`${prefix}ok:{x}`, 5, 1_000],
      [bad, 5, 1_000],
      [`${prefix}ok:{x}`, 5, 1_000],
    ]);
    expect(replies[0]).toEqual([1, 4, 0]);
    expect(replies[1]![0]).toBe(-1);
    expect(replies[1]![1]).toMatch(/WRONGTYPE/);
    expect(replies[2]).toEqual([1, 3, 0]);
  });

  it('reads the Redis server clock when given 0', async () => {
    const key = `${prefix}clock:{x}`;
    await runAt('sliding-log', 0, [[key, 5, 60_000]]);
    const [, score] = await redis.zrangebyscore(key, '(0', '+inf', 'WITHSCORES');
    expect(Math.abs(Number(score) - Date.now())).toBeLessThan(5_000);
  });
});

/** ZADD calls the Redis server has run (INFO commandstats counts the commands a script runs). */
async function zaddCalls(): Promise<number> {
  const info = await redis.info('commandstats');
  return Number(/cmdstat_zadd:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

const HOUR = 3_600_000;
const N = 50;
const POLICIES: Record<HardAlgorithm, HardLimitPolicy> = {
  'sliding-window': policy('sliding-window'),
  'sliding-log': policy('sliding-log'),
  // A refill of one token per 1000 s: nothing refills during the test, so exactly the burst is admitted.
  'token-bucket': { ...policy('token-bucket'), threshold: { count: N, intervalMs: HOUR, burst: { size: N, refillPerSecond: 0.001 } } },
};

function policy(algorithm: HardAlgorithm): HardLimitPolicy {
  return {
    id: `exact-${algorithm}`,
    mode: 'enforce',
    threshold: { count: N, intervalMs: HOUR },
    action: { type: 'throttle', status: 429 },
    enforcement: { type: 'hard', failureMode: 'closed', algorithm },
  };
}

describe('the hard limiter on the real Redis', () => {
  it("sends one request's checks of the three algorithms as one script call, and a broken key fails only its own check", async () => {
    const registry = createMetricsRegistry('hard-limits-test', { defaultMetrics: false });
    const logged = captureLogger();
    const limiter = createHardLimiter({ redis, logger: logged.logger, registry, keyPrefix: prefix, timeoutMs: 1_000 });
    await limiter.warmUp();
    const subject = 'user:77';
    const policies = (Object.keys(POLICIES) as HardAlgorithm[]).map((algorithm) => ({ ...POLICIES[algorithm], id: `batch-${algorithm}` }));
    const items = policies.map((policy) => ({ policy, subject }));
    const first = await limiter.check(items, Date.now());
    expect(first.map((c) => [c.source, c.deny, c.remaining])).toEqual([
      ['hard-limit', false, N - 1],
      ['hard-limit', false, N - 1],
      ['hard-limit', false, N - 1],
    ]);
    const perCall = await registry.getSingleMetricAsString('banstream_enforcer_redis_checks_per_call');
    expect(perCall).toMatch(/^banstream_enforcer_redis_checks_per_call_count\{[^}]*\} 1$/m);
    expect(perCall).toMatch(/^banstream_enforcer_redis_checks_per_call_sum\{[^}]*\} 3$/m);

    // Someone wrote a list where the sliding log lives: that check alone goes to its failure mode (closed).
    const broken = hardLimitKey(prefix, 'batch-sliding-log', 'sliding-log', 'user:78');
    await redis.rpush(broken, 'not a log');
    const mixed = await limiter.check(
      items.map((item) => ({ ...item, subject: 'user:78' })),
      Date.now(),
    );
    expect(mixed.map((c) => [c.source, c.deny])).toEqual([
      ['hard-limit', false],
      ['fail-mode', true],
      ['hard-limit', false],
    ]);
    const errors = (await registry.getSingleMetric('banstream_enforcer_redis_errors_total')!.get()).values;
    expect(errors.find((v) => v.labels.reason === 'script')?.value).toBe(1);
    expect(logged.lines().some((l) => l.msg === 'hard-limit script failed for a key; its failure mode decided' && /WRONGTYPE/.test(String(l.err)))).toBe(true);
    // Redis itself answered: the breaker stays closed.
    expect((await registry.getSingleMetric('banstream_enforcer_redis_breaker_state')!.get()).values[0]?.value).toBe(0);
    limiter.close();
  });
});

interface Worker {
  child: ChildProcess;
  next(): Promise<string>;
}

/** A worker process: one enforcer instance with its own Redis client (see hard-limit-worker.ts). */
function startWorker(): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/hard-limit-worker.ts', testInfra().redisUrl, prefix], {
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return {
    child,
    async next() {
      const line = await lines.next();
      if (line.done === true) throw new Error('hard-limit worker ended early');
      return line.value;
    },
  };
}

describe('four enforcer processes hammering one key', () => {
  let workers: Worker[] = [];

  beforeAll(async () => {
    workers = Array.from({ length: 4 }, startWorker);
    for (const w of workers) expect(await w.next()).toBe('ready');
  });

  afterAll(() => {
    for (const w of workers) w.child.stdin!.end();
  });

  it.each(Object.keys(POLICIES) as HardAlgorithm[])('%s: a hard limit of N admits exactly N in total', async (algorithm) => {
    const policy = POLICIES[algorithm];
    // Exact every time; and at least once more than one instance got a share, so they really
    // competed for the key (on a loaded machine one process may be scheduled alone for the
    // few ms that 50 admissions take: up to three keys are tried for that).
    let competed = 0;
    let subject = '';
    for (let round = 0; round < 3 && competed < 2; round++) {
      subject = `ip:198.51.${100 + round}.${Object.keys(POLICIES).indexOf(algorithm)}`;
      // Written to all four before any answer is read, with one start time: they run together.
      const task: WorkerTask = { policy, subject, attempts: 100, wave: 5, startAt: Date.now() + 300 };
      for (const w of workers) w.child.stdin!.write(`${JSON.stringify(task)}\n`);
      const results = await Promise.all(workers.map(async (w) => JSON.parse(await w.next()) as WorkerResult));
      const total = results.reduce((sum, r) => ({ admitted: sum.admitted + r.admitted, denied: sum.denied + r.denied, failMode: sum.failMode + r.failMode }));
      expect(total).toEqual({ admitted: N, denied: 4 * 100 - N, failMode: 0 });
      competed = results.filter((r) => r.admitted > 0).length;
    }
    expect(competed).toBeGreaterThan(1);

    // One key, tagged by the subject (one Cluster slot), expiring when idle.
    const keys = (await redis.keys(`${prefix}hl:${policy.id}:*`)).filter((k) => k.endsWith(`{${subject}}`));
    expect(keys).toHaveLength(1);
    expect(await redis.pttl(keys[0]!)).toBeGreaterThan(0);
  });
});
