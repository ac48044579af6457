import { afterAll, describe, expect, it } from 'vitest';
import { eventPartitionKey } from '@banstream/core';
import { SCHEMA_NAMES } from '@banstream/schemas';
import { waitUntil } from './support/infra.js';
import { startPipeline, type Pipeline, type Sidecar } from './support/pipeline.js';
import { catalog, TopicTail } from './support/aggregator.js';
import { kafkaPartition, postedEvent, startGateway, type Gateway } from './support/ingest.js';
import { partitionStates, startTestCluster, type TestCluster } from './support/cluster.js';

const PARTITIONS = 3;
const THRESHOLD = 100;
const CLIENTS = Array.from({ length: 300 }, (_, i) => `10.${60 + (i % 4)}.${i >> 2}.${1 + (i % 200)}`);
const POSTERS = 6;
const FLOODS_BEFORE = 5;
const FLOODS_DURING = 24;
const FLOOD_GAP_MS = 500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Three brokers of the test's own, topics with three replicas and min.insync.replicas 2,
 * the real gateway, aggregator and two enforcers, many clients posting through the
 * gateway. The broker leading the partitions of the events and bans topics that the
 * floods use is killed with SIGKILL mid-stream: every event the gateway answered 202
 * for still reaches the events topic and is counted, every flood is banned at both
 * enforcers (delays printed), and the broker, started again, is back in every ISR.
 */
describe('fault: the leader broker killed with SIGKILL under a flood', () => {
  let cluster: TestCluster | undefined;
  let pipeline: Pipeline | undefined;
  let gateway: Gateway | undefined;

  afterAll(async () => {
    gateway?.proc.child.kill('SIGKILL');
    await pipeline?.close();
    await cluster?.down();
  });

  it('loses no acknowledged event, bans every flood at every enforcer during the failover, and the broker rejoins', async () => {
    cluster = await startTestCluster(3);
    const { KAFKA_BROKERS, REDIS_URL } = cluster.connection;
    pipeline = await startPipeline(KAFKA_BROKERS, PARTITIONS, 3);
    const p = pipeline;
    const { admin, topics } = p.broker;
    for (const t of ['events', 'bans'] as const) {
      for (const s of await partitionStates(admin, topics.name(t))) expect(s.isr, `${t} partition ${s.partition} starts fully replicated`).toHaveLength(3);
    }
    await p.policy({ id: 'flood-per-ip', key: ['ip'], threshold: { count: THRESHOLD, interval: '1m' }, action: { type: 'ban', banDuration: '10m' } });
    await p.watch();
    // Events held back by the failover arrive late; a grace longer than it counts them (as in the broker-outage test).
    const aggregator = await p.startAggregator({ AGGREGATOR_GRACE_MS: '60000' });
    const sidecars = [await p.startSidecar({ REDIS_URL }), await p.startSidecar({ REDIS_URL })];
    gateway = await startGateway({ ...p.broker.env, INGEST_ALLOW_ANONYMOUS_EDGES: 'true' });
    const g = gateway;

    // The victim leads events partition 0; the floods come from addresses whose events
    // partition and whose ban's partition it both leads.
    const events = await partitionStates(admin, topics.name('events'));
    const bansTopic = await partitionStates(admin, topics.name('bans'));
    const victim = events[0]!.leader;
    const ledByVictim = (states: typeof events, key: string) => states[kafkaPartition(key, PARTITIONS)]!.leader === victim;
    const floodIps: string[] = [];
    for (let i = 0; floodIps.length < FLOODS_BEFORE + FLOODS_DURING && i < 60_000; i++) {
      const ip = `198.18.${i >> 8}.${i & 255}`;
      if (ledByVictim(events, eventPartitionKey(ip)) && ledByVictim(bansTopic, `ip:${ip}`)) floodIps.push(ip);
    }
    expect(floodIps).toHaveLength(FLOODS_BEFORE + FLOODS_DURING);

    // Many clients through the gateway; what it answered 202 for is the acknowledged side of the books.
    const acknowledged = new Set<string>();
    const refused = { count: 0, statuses: new Map<number, number>() };
    const post = async (batch: ReturnType<typeof postedEvent>[]) => {
      const res = await g.post(JSON.stringify(batch), 'application/json').catch(() => undefined);
      await res?.arrayBuffer();
      if (res?.status === 202) for (const e of batch) acknowledged.add(e.eventId!);
      else {
        refused.count += batch.length;
        refused.statuses.set(res?.status ?? 0, (refused.statuses.get(res?.status ?? 0) ?? 0) + 1);
      }
      return res?.status;
    };
    let posting = true;
    const posters = Array.from({ length: POSTERS }, async (_, w) => {
      // 300 clients at about 200 events/s in all: each stays well under the threshold per minute.
      for (let n = w; posting; n += POSTERS) {
        await post(Array.from({ length: 10 }, (_, i) => postedEvent(CLIENTS[(n * 10 + i) % CLIENTS.length]!, { host: p.host })));
        await sleep(300);
      }
    });

    const banned = async (s: Sidecar, ip: string) => (await s.check({ ip }).catch(() => undefined))?.body.allowed === false;
    /** One flood: THRESHOLD + 1 events from `ip` in one post, timed from just before it to a ban at both enforcers. */
    const flood = async (ip: string) => {
      const at = performance.now();
      const batch = Array.from({ length: THRESHOLD + 1 }, () => postedEvent(ip, { host: p.host }));
      // A refused post (503 while the gateway's buffer is full: nothing of it taken) is what an edge retries.
      while ((await post(batch)) !== 202) await sleep(200);
      const pending = new Set(sidecars);
      await waitUntil(
        async () => {
          for (const s of [...pending]) if (await banned(s, ip)) pending.delete(s);
          return pending.size === 0;
        },
        `flood ${ip} banned at both enforcers`,
        120_000,
        20,
      );
      return performance.now() - at;
    };

    await waitUntil(() => (p.counted() ?? 0) > 500, 'counting to be under way', 60_000, 100);
    const before: number[] = [];
    for (const ip of floodIps.slice(0, FLOODS_BEFORE)) before.push(await flood(ip));

    const killedAt = performance.now();
    expect(await cluster.stop(victim, 'SIGKILL')).toBe('killed');
    // Floods start while the broker is down and its partitions are being given new leaders.
    const during = Promise.all(
      floodIps.slice(FLOODS_BEFORE).map(async (ip, i) => {
        await sleep(i * FLOOD_GAP_MS);
        return { startedMs: performance.now() - killedAt, delayMs: await flood(ip) };
      }),
    );
    const electedMs = await waitUntil(
      async () => {
        const states = [...(await partitionStates(admin, topics.name('events'))), ...(await partitionStates(admin, topics.name('bans')))];
        return states.every((s) => s.leader !== victim && s.leader >= 0) ? performance.now() - killedAt : undefined;
      },
      'new leaders for every partition the victim led',
      60_000,
      50,
    );
    const floods = await during;

    await cluster.start(victim);
    await waitUntil(
      async () => {
        for (const t of ['events', 'bans', 'counts'] as const) for (const s of await partitionStates(admin, topics.name(t))) if (s.isr.length !== 3) return false;
        return true;
      },
      'the restarted broker back in every ISR',
      120_000,
      250,
    );
    posting = false;
    await Promise.all(posters);

    // Every acknowledged event is on the events topic, and the aggregator counted each record there.
    const onTopic = await new TopicTail(p.broker.kafka, topics.name('events'), (b) => catalog.codec(SCHEMA_NAMES.requestEventBatch).decode(b)).start();
    const ids = () => onTopic.records.flatMap((r) => r.value?.events.filter((e) => e.host === p.host).map((e) => e.eventId) ?? []);
    try {
      await waitUntil(
        () => {
          const seen = new Set(ids());
          return [...acknowledged].every((id) => seen.has(id));
        },
        () => `every acknowledged event on the events topic (${acknowledged.size} acknowledged, ${new Set(ids()).size} there)`,
        120_000,
        250,
      ).catch(() => undefined);
      const seen = new Set(ids());
      const lost = [...acknowledged].filter((id) => !seen.has(id));
      await p.watch();
      await p.waitCounted(() => ids().length, 120_000).catch(() => undefined);
      const summary = {
        test: 'fault-broker-kill',
        victim,
        acknowledged: acknowledged.size,
        refused_events: refused.count,
        refused_statuses: Object.fromEntries(refused.statuses),
        on_topic: ids().length,
        duplicates: ids().length - seen.size,
        lost: lost.length,
        counted: p.counted(),
        aggregator_consumed: await aggregator.metric('banstream_aggregator_events_consumed_total'),
        // The gateway's own books, to tell a loss in Kafka from events it still holds or dropped.
        gateway_delivered: await g.metric('banstream_edge_events_delivered_total'),
        gateway_dropped: await g.metric('banstream_edge_events_dropped_total'),
        gateway_buffered: await g.metric('banstream_edge_buffer_events'),
        leaders_moved_after_ms: Math.round(electedMs),
        propagation_ms_before: before.map(Math.round),
        propagation_ms_during: floods.map((f) => [Math.round(f.startedMs), Math.round(f.delayMs)]),
      };
      console.log(JSON.stringify(summary));
      expect(lost, 'acknowledged events missing from the events topic').toEqual([]);
      expect(p.counted()).toBe(ids().length);
      expect(summary.aggregator_consumed).toBeGreaterThanOrEqual(acknowledged.size);
      expect(await aggregator.metric('banstream_aggregator_late_events_total')).toBe(0);
    } finally {
      await onTopic.stop();
    }

    // Each flood has one ban, on the partition the victim led, and both enforcers apply it.
    // The bans reader watch() made may still be catching up (its coordinator may have been the victim).
    await waitUntil(() => floodIps.every((ip) => p.bans().records.some((r) => r.key === `ip:${ip}` && r.value !== null)), 'every flood’s ban read by the test', 60_000, 100);
    const bans = p.bans().records;
    for (const ip of floodIps) {
      const records = bans.filter((r) => r.key === `ip:${ip}` && r.value !== null);
      expect(new Set(records.map((r) => r.value!.banId)).size, `ban ids of ${ip}`).toBe(1);
      expect(records[0]!.partition).toBe(kafkaPartition(`ip:${ip}`, PARTITIONS));
      for (const s of sidecars) expect(await banned(s, ip), `${ip} at ${s.url}`).toBe(true);
    }
    // Unflooded clients pass.
    for (const s of sidecars) expect((await s.check({ ip: CLIENTS[0]! })).body.allowed).toBe(true);
  }, 600_000);
});
