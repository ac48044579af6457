import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Admin, Kafka, Producer } from '@banstream/kafka';
import type { Ban, WindowCount } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { exitWithin, freePort, isAlive, REPO_ROOT, spawnService } from './support/processes.js';
import { decodeBan, decodeCount, publishEvents, startAggregator, stopAggregators, sumMetric, TopicTail, workerPids, type Aggregator } from './support/aggregator.js';
import { committedAll, expectExactResult, publishCountingPolicies, scaleOutEnv, traffic } from './support/aggregator-traffic.js';

/** Which workers logged a partition of `topic` assigned to them. */
function workersAssigned(a: Aggregator, topic: string): Set<number> {
  const out = new Set<number>();
  for (const line of a.proc.output().split('\n')) {
    if (!line.includes('partition assigned') || !line.includes(`"topic":"${topic}"`)) continue;
    out.add((JSON.parse(line) as { worker: number }).worker);
  }
  return out;
}

async function readyz(a: Aggregator): Promise<{ status: number; body: { checks: Record<string, boolean> } }> {
  const response = await fetch(`http://127.0.0.1:${a.port}/readyz`);
  return { status: response.status, body: (await response.json()) as { checks: Record<string, boolean> } };
}

/**
 * AGGREGATOR_WORKERS=2: one process supervises two aggregator processes that share
 * the groups. Counts stay exact when a worker is killed with SIGKILL (the supervisor
 * replaces it); the supervisor answers /readyz and /metrics for both; SIGTERM stops
 * them all, and a supervisor killed with SIGKILL leaves no worker behind.
 */
describe('aggregator workers under one supervisor', () => {
  const { kafkaBrokers } = testInfra();
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  let topics: TestBroker['topics'];
  let broker: TestBroker | undefined;
  const running: Aggregator[] = [];
  const env = () => ({ ...scaleOutEnv(kafkaBrokers, topics.prefix), AGGREGATOR_WORKERS: '2', LOG_LEVEL: 'info' });

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 12);
    ({ kafka, admin, producer, topics } = broker);
    await publishCountingPolicies(producer, topics.name('policies'));
  }, 60_000);

  afterAll(async () => {
    await stopAggregators(running, 20_000);
    await broker?.close();
  });

  it('counts exactly across a worker killed with SIGKILL, answers for both workers and stops them all on SIGTERM', async () => {
    const a = await startAggregator(env());
    running.push(a);
    const ready = await readyz(a);
    expect(ready.body.checks).toMatchObject({ 'worker 1': true, 'worker 2': true });
    const counts = await new TopicTail<WindowCount>(kafka, topics.name('counts'), decodeCount).start();
    const bans = await new TopicTail<Ban>(kafka, topics.name('bans'), decodeBan).start();
    try {
      const first = traffic(1, Date.now());
      await publishEvents(producer, topics.name('events'), first, 50);
      // /metrics sums the workers: every event of the first half, counted once, live.
      // Live only: a replay after a rebalance counts again, as replay="true".
      await waitUntil(async () => (await a.metric('banstream_aggregator_events_consumed_total', 'replay="false"')) === first.length, `${first.length} events counted`, 30_000);
      expect(workersAssigned(a, topics.name('events'))).toEqual(new Set([1, 2]));
      await waitUntil(() => committedAll(admin, env().AGGREGATOR_GROUP_ID, topics.name('events')), 'the first half committed', 30_000);
      await waitUntil(() => committedAll(admin, `${env().AGGREGATOR_GROUP_ID}.subjects`, topics.name('aggregator-subjects')), 'its repartition committed', 30_000);

      const [killed] = workerPids(a, 1);
      process.kill(killed!, 'SIGKILL');
      await waitUntil(() => workerPids(a, 1).length === 2, 'worker 1 replaced', 15_000);
      const second = traffic(2, Date.now());
      await publishEvents(producer, topics.name('events'), second, 50);

      await expectExactResult(counts, bans, [...first, ...second]);
      expect(await a.metric('banstream_worker_replacements_total')).toBe(1);
      await waitUntil(async () => (await readyz(a)).status === 200, 'both workers ready again', 30_000);
      expect(a.proc.output()).toContain('"msg":"worker died: replacing it"');
    } finally {
      await counts.stop();
      await bans.stop();
    }

    const workers = [workerPids(a, 1).at(-1)!, workerPids(a, 2).at(-1)!];
    a.proc.child.kill('SIGTERM');
    expect(await exitWithin(a.proc, 20_000)).toBe(0);
    expect(workers.filter(isAlive)).toEqual([]);
    expect(a.proc.output().match(/"msg":"worker stopped"/g)).toHaveLength(2);
  }, 180_000);

  it('leaves no worker behind when the supervisor is killed with SIGKILL', async () => {
    const a = await startAggregator({ ...env(), AGGREGATOR_GROUP_ID: `${topics.prefix}orphans` });
    running.push(a);
    const workers = [workerPids(a, 1)[0]!, workerPids(a, 2)[0]!];
    expect(workers.every(isAlive)).toBe(true);
    // The workers get the aggregator's young generation; the supervisor, which only relays, keeps its small one.
    const semiSpace = (pid: number) =>
      readFileSync(`/proc/${pid}/cmdline`, 'utf8')
        .split('\0')
        .filter((arg) => arg.startsWith('--max-semi-space-size'));
    expect(semiSpace(a.proc.child.pid!)).toEqual(['--max-semi-space-size=1']);
    for (const pid of workers) expect(semiSpace(pid)).toEqual(['--max-semi-space-size=64']);
    a.proc.child.kill('SIGKILL');
    await a.proc.exited;
    await waitUntil(() => workers.filter(isAlive).length === 0, 'the workers to end with their supervisor', 10_000);
  }, 90_000);
  it('loads no Kafka client, Avro or Redis library in the supervisor, which only relays; its worker does', async () => {
    const report = join(mkdtempSync(join(tmpdir(), 'banstream-loaded-')), 'report.jsonl');
    const a = await startAggregator({
      ...env(),
      AGGREGATOR_WORKERS: '1',
      AGGREGATOR_GROUP_ID: `${topics.prefix}loaded`,
      NODE_OPTIONS: `--require ${join(REPO_ROOT, 'test/support/loaded-modules.cjs')}`,
      LOADED_MODULES_REPORT: report,
    });
    running.push(a);
    a.proc.child.kill('SIGTERM');
    expect(await exitWithin(a.proc, 20_000)).toBe(0);
    const lines = readFileSync(report, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { primary: boolean; loaded: string[] });
    expect(lines.filter((l) => l.primary).map((l) => l.loaded)).toEqual([[]]);
    expect(lines.filter((l) => !l.primary).map((l) => l.loaded)).toEqual([expect.arrayContaining(['avsc', 'kafkajs'])]);
  }, 90_000);

  it('answers /metrics at once while its workers start, counting those not listening yet as unanswered', async () => {
    const port = await freePort();
    const proc = spawnService('aggregator', { ...env(), AGGREGATOR_GROUP_ID: `${topics.prefix}scrapes`, LOG_LEVEL: 'warn', HTTP_PORT: String(port) });
    const scrapes: { ms: number; unanswered: number }[] = [];
    try {
      await waitUntil(
        async () => {
          const t = performance.now();
          const text = await fetch(`http://127.0.0.1:${port}/metrics`).then(
            (r) => (r.ok ? r.text() : undefined),
            () => undefined,
          );
          if (text === undefined) return false;
          const unanswered = sumMetric(text, 'banstream_workers_unanswered');
          scrapes.push({ ms: performance.now() - t, unanswered });
          return unanswered === 0;
        },
        'both workers to answer',
        60_000,
        50,
      );
      // Asking a worker before it listens used to wait out the 2 s ask timeout.
      expect(
        scrapes.some((s) => s.unanswered > 0),
        JSON.stringify(scrapes),
      ).toBe(true);
      expect(
        scrapes.filter((s) => s.ms >= 1_500),
        JSON.stringify(scrapes),
      ).toEqual([]);
    } finally {
      proc.child.kill('SIGTERM');
      await exitWithin(proc, 20_000).catch(() => proc.child.kill('SIGKILL'));
    }
  }, 180_000);
});
