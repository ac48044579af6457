import { afterAll, describe, expect, it } from 'vitest';
import type { FailureMode } from '@banstream/core';
import { testInfra, waitUntil } from './support/infra.js';
import { NO_DROPS, serveThrough, startPipeline, type Edge, type Pipeline, type Sidecar } from './support/pipeline.js';
import { startPrivateRedis, type PrivateRedis } from './support/private-redis.js';

const LIMIT = 3;
/**
 * Above the 5 ms default: on two shared, loaded cores a healthy call (the first after
 * a restart reloads the scripts) now and then takes tens of ms, and a timeout is a
 * failure-mode decision, which would make the exact checks flaky. The bound is what counts.
 */
const TIMEOUT_MS = 250;
/** HTTP and scheduling on two loaded cores; a check waiting on a dead Redis without its timeout would take seconds. */
const SLACK_MS = 400;
const MODES: FailureMode[] = ['open', 'closed', 'local'];
const CLIENTS = Array.from({ length: 20 }, (_, i) => `10.30.${i}.1`);

/**
 * The pipeline-level version of enforcer-hard-failure.test.ts (which tests the
 * limiter itself, with exact timings): a sidecar process on a Redis of its own,
 * one hard policy per failure mode, an edge serving through it and publishing its
 * events, and the aggregator counting them. Redis is killed and started again.
 */
describe("fault: the enforcer's Redis stopped and restarted", () => {
  const { kafkaBrokers } = testInfra();
  let pipeline: Pipeline | undefined;
  let redis: PrivateRedis | undefined;

  afterAll(async () => {
    await pipeline?.close();
    await redis?.stop();
  });

  it('decides by each failure mode within its timeout, keeps counting events, and resumes exact limits by itself', async () => {
    redis = await startPrivateRedis();
    pipeline = await startPipeline(kafkaBrokers, 3);
    const p = pipeline;
    for (const mode of MODES) {
      await p.policy({
        id: `signup-${mode}`,
        key: ['ip'],
        match: { paths: [`/${mode}`] },
        threshold: { count: LIMIT, interval: '1h' },
        action: { type: 'throttle', status: 429 },
        enforcement: { type: 'hard', failureMode: mode },
        mode: 'enforce',
      });
    }
    await p.watch();
    await p.startAggregator();
    const sidecar = await p.startSidecar({ REDIS_URL: redis.url, ENFORCER_REDIS_TIMEOUT_MS: String(TIMEOUT_MS), ENFORCER_BREAKER_COOLDOWN_MS: '500' });
    const edge = p.edge('edge-redis');
    const edgeLoop = serveThrough(edge, () => sidecar, CLIENTS);
    let client = 0;
    /** LIMIT + 1 requests of a new client on each policy's path, answered and published as an edge would. */
    const burst = async () => {
      const ip = `192.0.2.${++client}`;
      const out: Record<string, { allowed: unknown; source: unknown; ms: number }[]> = {};
      for (const mode of MODES) {
        out[mode] = [];
        for (let i = 0; i <= LIMIT; i++) out[mode].push(await request(sidecar, edge, ip, `/${mode}`));
      }
      return out;
    };
    const exact = (source: string) => [true, true, true, false].map((allowed) => ({ allowed, source: allowed ? 'none' : source }));

    await waitUntil(async () => (await sidecar.check({ ip: '192.0.2.250', path: '/open' })).body.limit === LIMIT, 'the hard policies at the sidecar', 20_000, 50);
    // Redis up: exactly LIMIT pass, then the hard limit.
    const up = await burst();
    for (const mode of MODES)
      expect(
        up[mode]!.map(({ allowed, source }) => ({ allowed, source })),
        mode,
      ).toEqual(exact('hard-limit'));

    await redis.kill();
    const down = await burst();
    for (const { ms } of Object.values(down).flat()) expect(ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    expect(down.open!.map((r) => [r.allowed, r.source])).toEqual([
      [true, 'none'],
      [true, 'none'],
      [true, 'none'],
      [true, 'none'],
    ]);
    expect(down.closed!.map((r) => [r.allowed, r.source])).toEqual([
      [false, 'fail-mode'],
      [false, 'fail-mode'],
      [false, 'fail-mode'],
      [false, 'fail-mode'],
    ]);
    // The local window keeps the policy's own limit in the process.
    expect(down.local!.map((r) => [r.allowed, r.source])).toEqual([
      [true, 'none'],
      [true, 'none'],
      [true, 'none'],
      [false, 'fail-mode'],
    ]);
    // The edge goes on serving and publishing while Redis is away.
    const servedDown = edgeLoop.served.checked;
    await waitUntil(() => edgeLoop.served.checked > servedDown + 20, 'the edge to go on serving', 20_000, 50);
    const countedDown = p.counted() ?? 0;
    await waitUntil(() => (p.counted() ?? 0) > countedDown, 'events to be counted while Redis is down', 20_000, 100);

    await redis.start();
    // No restart of anything: the sidecar's breaker probes and finds Redis again.
    // Only Redis can allow a request under the closed mode.
    await waitUntil(async () => (await sidecar.check({ ip: `192.0.2.${++client}`, path: '/closed' })).body.allowed === true, 'the restarted Redis to answer', 30_000, 100);
    const back = await burst();
    for (const mode of MODES)
      expect(
        back[mode]!.map(({ allowed, source }) => ({ allowed, source })),
        mode,
      ).toEqual(exact('hard-limit'));

    await edgeLoop.stop();
    const stats = await edge.settle(15_000);
    expect(stats.dropped).toEqual(NO_DROPS);
    expect(edgeLoop.served.failedOpen).toBe(0);
    await p.waitCounted(() => edge.accepted(), 60_000);
    expect(p.counted()).toBe(edge.accepted());
  }, 150_000);
});

/** One request at the edge: the sidecar's decision, then the event with the status answered. */
async function request(sidecar: Sidecar, edge: Edge, ip: string, path: string) {
  const { body, ms } = await sidecar.check({ ip, path });
  edge.send(ip, body.allowed === false ? Number(body.status) : 200, path);
  return { allowed: body.allowed, source: body.source, ms };
}
