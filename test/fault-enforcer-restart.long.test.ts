import { afterAll, describe, expect, it } from 'vitest';
import { testInfra, waitUntil } from './support/infra.js';
import { NO_DROPS, serveThrough, startPipeline, type Pipeline, type Sidecar } from './support/pipeline.js';

const BANNED = '203.0.113.9';
const THROTTLED = '198.51.100.44';
const CLIENTS = Array.from({ length: 20 }, (_, i) => `10.20.${i}.1`);

/**
 * An enforcer sidecar with a ban, a shared count over a throttle threshold and
 * policies in its cache is killed (SIGKILL) and started again: the first answer
 * after /readyz says 200 already comes from the rebuilt caches. Meanwhile the edge
 * goes on serving (failing open while the sidecar is away) and every event it
 * publishes is counted.
 */
describe('fault: an enforcer sidecar restarted', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  let pipeline: Pipeline | undefined;

  afterAll(async () => {
    await pipeline?.close();
  });

  it('rebuilds bans, counts and policies before it is ready, while events keep being counted', async () => {
    pipeline = await startPipeline(kafkaBrokers, 3);
    const p = pipeline;
    await p.policy({ id: 'api-per-ip', key: ['ip'], match: { pathPrefixes: ['/api/'] }, threshold: { count: 10, interval: '1h' }, action: { type: 'throttle', status: 429 } });
    await p.policy({
      id: 'signup-hard',
      key: ['ip'],
      match: { paths: ['/signup'] },
      threshold: { count: 1_000, interval: '1h' },
      action: { type: 'throttle', status: 429 },
      enforcement: { type: 'hard', failureMode: 'closed' },
      mode: 'enforce',
    });
    await p.watch();
    await p.startAggregator();
    const env = { REDIS_URL: redisUrl, ENFORCER_REDIS_TIMEOUT_MS: '200' };
    let sidecar: Sidecar = await p.startSidecar(env);
    const edge = p.edge('edge-restart');
    // The edge serves requests through the sidecar; with no sidecar it fails open.
    const edgeLoop = serveThrough(edge, () => sidecar, CLIENTS);
    const { served } = edgeLoop;
    const background = edge.steady(CLIENTS, 5, 20);

    // What the cache holds before the restart: a ban, a count far over its threshold (98% to deny), the policies.
    await p.ban(`ip:${BANNED}`);
    for (let i = 0; i < 500; i++) edge.send(THROTTLED, 200, '/api/items');
    await waitUntil(async () => (await sidecar.check({ ip: BANNED })).body.source === 'ban', 'the ban at the sidecar', 20_000, 50);
    await waitUntil(async () => (await sidecar.check({ ip: THROTTLED, path: '/api/items' })).body.source === 'throttle', 'the throttle at the sidecar', 30_000, 50);
    expect((await sidecar.check({ ip: '192.0.2.1', path: '/signup' })).body).toMatchObject({ allowed: true, limit: 1_000 });
    const countedBefore = p.counted() ?? 0;

    sidecar.proc.child.kill('SIGKILL');
    await sidecar.proc.exited;
    const failedOpenBefore = served.failedOpen;
    // startSidecar returns on the first 200 from /readyz: the very next answers must come from full caches.
    const fresh = await p.startSidecar(env);
    const first = await fresh.check({ ip: BANNED });
    expect(first.body).toMatchObject({ allowed: false, status: 403, source: 'ban', policyId: 'manual' });
    const throttled = await Promise.all([1, 2, 3].map(() => fresh.check({ ip: THROTTLED, path: '/api/items' })));
    expect(
      throttled.some((t) => t.body.source === 'throttle' && t.body.allowed === false),
      JSON.stringify(throttled.map((t) => t.body)),
    ).toBe(true);
    expect((await fresh.check({ ip: '192.0.2.1', path: '/signup' })).body).toMatchObject({ allowed: true, limit: 1_000 });
    expect((await fresh.check({ ip: '192.0.2.2' })).body.allowed).toBe(true);
    const listed = (await (await fetch(`${fresh.url}/v1/bans?scope=ip`)).json()) as { bans: { subject: string }[] };
    expect(listed.bans.map((b) => b.subject)).toEqual([`ip:${BANNED}`]);
    sidecar = fresh;

    // The edge went on serving, without its sidecar for a while, and is back to checked answers.
    expect(served.failedOpen).toBeGreaterThan(failedOpenBefore);
    const checkedAfter = served.checked;
    await waitUntil(() => served.checked > checkedAfter + 20, 'the edge to be answered by the new sidecar', 20_000, 50);
    await edgeLoop.stop();
    background.stop();

    const stats = await edge.settle(15_000);
    expect(stats.dropped).toEqual(NO_DROPS);
    await p.waitCounted(() => edge.accepted(), 60_000);
    expect(p.counted()).toBe(edge.accepted());
    expect(p.counted()!).toBeGreaterThan(countedBefore);
  }, 150_000);
});
