/**
 * npm run soak
 *
 * Runs the whole pipeline (aggregator, enforcer sidecar, control, ingest gateway: the
 * built services as processes) for SOAK_MINUTES (default 10) under a steady
 * SOAK_RATE events/s (default 50,000) of churning traffic (traffic.ts), and reports
 * per service the slope of its resident memory after the warm-up (target: flat, under
 * 1 MB/min) and the consumer lag. SOAK_GATEWAY_SHARE (default 0.1) of the events go
 * through the gateway as Avro batches, the rest straight to Kafka through an
 * EdgePublisher, as Node edges do. Reports; never judges by exit code.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEdgePublisher } from '@banstream/edge';
import { createLogger } from '@banstream/platform';
import { createKafka, ensureTopics, parseBrokers, topicFullName, topicSpecs } from '@banstream/kafka';
import { SCHEMA_NAMES, loadSchemaCatalog, type RequestEvent } from '@banstream/schemas';
import { benchSeed, note, prng, report, sig } from '../lib.js';
import { benchKafka, deleteGroups, deleteTopics, publishPolicies } from '../aggregator/kafka.js';
import { Pacer } from './pacing.js';
import { SERVICES, SOAK_POLICIES, startPipeline, type Pipeline, type ServiceName } from './pipeline.js';
import { groupLag, metric, rssBytes, scrape } from './probe.js';
import { defaultWarmupMs, mbPerMinAfter, type Sample } from './slope.js';
import { DEFAULT_SHAPE, Traffic, attackerIp, isFlood } from './traffic.js';

function numberEnv(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === '' ? fallback : Number(raw.replaceAll('_', ''));
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`${name}: expected a number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return n;
}

const MINUTES = numberEnv('SOAK_MINUTES', 10, 0.5, 24 * 60);
const RATE = numberEnv('SOAK_RATE', 50_000, 100, 10_000_000);
const RUN_MS = MINUTES * 60_000;
const WARMUP_MS = process.env.SOAK_WARMUP_S ? numberEnv('SOAK_WARMUP_S', 0, 0, RUN_MS / 1000 - 10) * 1000 : defaultWarmupMs(RUN_MS);
const GATEWAY_SHARE = numberEnv('SOAK_GATEWAY_SHARE', 0.1, 0, 1);
const BROKERS = process.env.KAFKA_BROKERS ?? '127.0.0.1:19092';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:16379';
const PARTITIONS = 6;
const TICK_MS = 50;
const SAMPLE_MS = 5_000;
const PROGRESS_MS = 30_000;
const CHECKS_PER_TICK = 2; // 40 enforcer checks a second
const GATEWAY_BATCH = 500;
const GATEWAY_IN_FLIGHT = 16;
const EDGES = 4;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const MB = 1024 * 1024;

interface Point {
  t: number;
  rss: Partial<Record<ServiceName, number>>;
  heap: Partial<Record<ServiceName, number>>;
  /** Memory V8 tracks outside the heap (Buffers, typed arrays). */
  external: Partial<Record<ServiceName, number>>;
  lagRecords: number;
  lagRecordsSubjects: number;
  lagEvents: number;
  feedLagMs: number;
  /** Aggregator window entries and their bytes: state that must expire, for diagnosis. */
  aggregatorKeys: number;
  aggregatorStateBytes: number;
}

async function main(): Promise<void> {
  const prefix = `soak-${Date.now()}-${process.pid}.`;
  const groupId = `${prefix}aggregator`;
  const eventsTopic = topicFullName(prefix, 'events');
  const kafka = benchKafka(parseBrokers(BROKERS), `soak-${process.pid}`);
  const admin = kafka.admin();
  await admin.connect();
  const catalog = loadSchemaCatalog();
  const batchCodec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
  await ensureTopics(admin, topicSpecs({ prefix, partitions: PARTITIONS, replicationFactor: 1 }));
  await publishPolicies(kafka, prefix, catalog, SOAK_POLICIES);

  const env = { KAFKA_BROKERS: BROKERS, REDIS_URL, TOPIC_PREFIX: prefix, TOPIC_PARTITIONS: String(PARTITIONS), LOG_LEVEL: 'warn' };
  let pipeline: Pipeline | undefined;
  const logger = createLogger({ service: 'soak-edge', level: 'warn', destination: process.stderr });
  // One publisher per edge (events carry edge-0..3), as a fleet of Node edges would have.
  const publishers = Array.from({ length: EDGES }, (_, i) =>
    createEdgePublisher({ kafka: createKafka({ brokers: parseBrokers(BROKERS), clientId: `soak-edge-${i}`, logger }), topic: eventsTopic, logger }),
  );
  const edgeStats = () =>
    publishers
      .map((x) => x.stats())
      .reduce(
        (a, b) => ({
          delivered: a.delivered + b.delivered,
          dropped: a.dropped + Object.values(b.dropped).reduce((x, y) => x + y, 0),
        }),
        { delivered: 0, dropped: 0 },
      );
  let stop = false;
  process.once('SIGINT', () => void (stop = true));
  try {
    note(`soak: ${MINUTES} min at ${RATE} events/s (${GATEWAY_SHARE * 100}% through the gateway), warm-up ${WARMUP_MS / 1000} s, topics ${prefix}*`);
    pipeline = await startPipeline(env, groupId);
    const p = pipeline;
    const gatewayUrl = `http://127.0.0.1:${p.port('ingest')}/v1/events`;
    const enforcerUrl = `http://127.0.0.1:${p.port('enforcer')}/v1/check`;

    // --- the sender ---
    const traffic = new Traffic(DEFAULT_SHAPE, prng(benchSeed(20_260_101)), `${process.pid.toString(36)}-`);
    const pacer = new Pacer(RATE, Math.ceil((RATE * TICK_MS) / 1000) * 4);
    const gateway = { inFlight: 0, accepted: 0, refused: 0, busy: 0 };
    const checks = { done: 0, denied: 0, failed: 0, attackerDenied: 0 };
    let checking = 0;
    const post = (events: RequestEvent[]) => {
      gateway.inFlight++;
      fetch(gatewayUrl, { method: 'POST', body: batchCodec.encode({ events }), headers: { 'content-type': 'application/avro' } })
        .then(
          async (res) => {
            await res.arrayBuffer();
            if (res.status === 202) gateway.accepted += events.length;
            else gateway.refused += events.length;
          },
          () => void (gateway.refused += events.length),
        )
        .finally(() => gateway.inFlight--);
    };
    const check = (ip: string, attacker: boolean) => {
      checking++;
      fetch(enforcerUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ip, method: 'GET', host: 'shop.example', path: '/' }) })
        .then(
          async (res) => {
            const allowed = ((await res.json()) as { allowed: boolean }).allowed;
            checks.done++;
            if (!allowed) checks.denied++;
            if (!allowed && attacker) checks.attackerDenied++;
          },
          () => void checks.failed++,
        )
        .finally(() => checking--);
    };
    let viaGateway = 0;
    const began = performance.now();
    const sender = (async () => {
      for (let tick = 1; !stop; tick++) {
        const elapsed = performance.now() - began;
        if (elapsed >= RUN_MS) break;
        const n = pacer.take(elapsed);
        const events = traffic.next(n, elapsed, Date.now());
        let g = Math.round(n * GATEWAY_SHARE);
        // The gateway share goes as batches; when the gateway is that far behind, edges would wait: we send directly.
        if (gateway.inFlight >= GATEWAY_IN_FLIGHT) {
          gateway.busy += g;
          g = 0;
        }
        for (let i = 0; i < g; i += GATEWAY_BATCH) post(events.slice(i, Math.min(g, i + GATEWAY_BATCH)));
        viaGateway += g;
        for (let i = g; i < events.length; i++) publishers[Number(events[i]!.edgeId.slice(5)) % EDGES]!.publish(events[i]!);
        if (checking < 8) {
          // The flood that started about 14 s ago crossed its threshold (600 at 60/s) some 4 s ago: banned for 30 s.
          const a = Math.max(0, traffic.attacksStarted(elapsed - 14_000) - 1);
          check(attackerIp(isFlood(a) ? a : Math.max(0, a - 1)), true);
          for (let c = 1; c < CHECKS_PER_TICK && events.length > 0; c++) check(events[events.length - c]!.ip, false);
        }
        const wait = began + tick * TICK_MS - performance.now();
        await sleep(Math.max(0, wait));
      }
      return performance.now() - began;
    })();

    // --- the sampler ---
    const points: Point[] = [];
    let lastFeed = { sum: 0, count: 0 };
    let lastProgress = 0;
    const sampleOnce = async (): Promise<Point> => {
      const t = performance.now() - began;
      const texts = Object.fromEntries(await Promise.all(SERVICES.map(async (name) => [name, await scrape(p.port(name))] as const))) as Record<ServiceName, string | undefined>;
      const rss: Point['rss'] = {};
      const heap: Point['heap'] = {};
      const external: Point['external'] = {};
      for (const s of p.services) {
        const bytes = rssBytes(s.proc.child.pid) ?? 0;
        if (bytes > 0) rss[s.name] = bytes;
        const used = metric(texts[s.name], 'banstream_nodejs_heap_size_used_bytes');
        if (used > 0) heap[s.name] = used;
        const outside = metric(texts[s.name], 'banstream_nodejs_external_memory_bytes');
        if (outside > 0) external[s.name] = outside;
      }
      const [lagRecords, lagRecordsSubjects] = await Promise.all([
        groupLag(admin, groupId, eventsTopic).catch(() => Number.NaN),
        groupLag(admin, `${groupId}.subjects`, topicFullName(prefix, 'aggregator-subjects')).catch(() => Number.NaN),
      ]);
      // Events Kafka acknowledged (edge publisher here, the gateway's publisher there) less those the aggregator counted.
      // A service too busy to answer within 3 s gives no figure for this sample (not a zero).
      const acked = edgeStats().delivered + metric(texts.ingest, 'banstream_edge_events_delivered_total');
      const lagEvents = texts.aggregator === undefined || texts.ingest === undefined ? Number.NaN : Math.max(0, acked - processed(texts.aggregator));
      const feed = { sum: metric(texts.enforcer, 'banstream_enforcer_feed_lag_seconds_sum'), count: metric(texts.enforcer, 'banstream_enforcer_feed_lag_seconds_count') };
      const feedLagMs = texts.enforcer === undefined ? Number.NaN : feed.count > lastFeed.count ? ((feed.sum - lastFeed.sum) / (feed.count - lastFeed.count)) * 1000 : 0;
      if (texts.enforcer !== undefined) lastFeed = feed;
      await fetch(`http://127.0.0.1:${p.port('control')}/v1/bans?limit=100`, { headers: { authorization: `Bearer ${p.viewerToken}` } }).then(
        (r) => r.arrayBuffer(),
        () => undefined,
      );
      const aggregatorKeys = metric(texts.aggregator, 'banstream_aggregator_state_keys');
      const aggregatorStateBytes = metric(texts.aggregator, 'banstream_aggregator_state_bytes');
      const point = { t, rss, heap, external, lagRecords, lagRecordsSubjects, lagEvents, feedLagMs, aggregatorKeys, aggregatorStateBytes };
      if (t - lastProgress >= PROGRESS_MS) {
        lastProgress = t;
        const sent = pacer.totals().sent;
        const edges = edgeStats();
        note(
          `soak ${(t / 60_000).toFixed(1)} min: ${sent.toLocaleString('en')} events generated (${Math.round((sent / t) * 1000).toLocaleString('en')}/s), ${edges.dropped.toLocaleString('en')} dropped by the edges, lag ${lagEvents.toLocaleString('en')} events / ${lagRecords} records, ` +
            `rss MB ${SERVICES.map((n) => `${n} ${((rss[n] ?? 0) / MB).toFixed(0)}`).join(', ')}, ` +
            `aggregator keys ${metric(texts.aggregator, 'banstream_aggregator_state_keys')}, bans ${metric(texts.aggregator, 'banstream_aggregator_bans_emitted_total')} / tombstones ${metric(texts.aggregator, 'banstream_aggregator_ban_tombstones_total')}`,
        );
      }
      return point;
    };
    while (!stop && performance.now() - began < RUN_MS) {
      const dead = p.died();
      if (dead.length > 0) throw new Error(`a service died during the soak:\n${dead.join('\n')}`);
      points.push(await sampleOnce());
      const next = began + points.length * SAMPLE_MS;
      while (!stop && performance.now() < next && performance.now() - began < RUN_MS) await sleep(Math.min(250, next - performance.now()));
    }
    stop = true;
    const sendMs = await sender;
    const end = await sampleOnce();
    points.push(end);
    const lastTexts = Object.fromEntries(await Promise.all(SERVICES.map(async (name) => [name, await scrape(p.port(name))] as const))) as Record<ServiceName, string | undefined>;
    const agg = lastTexts.aggregator;
    await sleep(1_000);

    const figures: Record<string, number> = {};
    const slopes: number[] = [];
    for (const name of SERVICES) {
      const rss: Sample[] = points.flatMap((pt) => (pt.rss[name] === undefined ? [] : [{ t: pt.t, value: pt.rss[name]! }]));
      const heap: Sample[] = points.flatMap((pt) => (pt.heap[name] === undefined ? [] : [{ t: pt.t, value: pt.heap[name]! }]));
      const slope = mbPerMinAfter(rss, WARMUP_MS);
      slopes.push(slope);
      figures[`memory_slope_mb_per_min_${name}`] = sig(slope, 3);
      figures[`heap_slope_mb_per_min_${name}`] = sig(mbPerMinAfter(heap, WARMUP_MS), 3);
      figures[`rss_mb_end_${name}`] = sig((rss.at(-1)?.value ?? Number.NaN) / MB, 4);
      figures[`rss_mb_max_${name}`] = sig(Math.max(...rss.map((s) => s.value)) / MB, 4);
    }
    const { sent, skipped } = pacer.totals();
    const edges = edgeStats();
    const finite = (xs: number[]) => xs.filter(Number.isFinite);
    Object.assign(figures, {
      max_memory_slope_mb_per_min: sig(Math.max(...slopes.filter(Number.isFinite)), 3),
      max_lag_events: Math.max(...finite(points.map((pt) => pt.lagEvents))),
      end_lag_events: end.lagEvents,
      max_lag_records: Math.max(...finite(points.map((pt) => pt.lagRecords))),
      end_lag_records: end.lagRecords,
      max_lag_records_subjects: Math.max(...finite(points.map((pt) => pt.lagRecordsSubjects))),
      // After the warm-up: the first interval includes the policies published before the enforcer started.
      max_enforcer_feed_lag_ms: sig(Math.max(0, ...finite(points.filter((pt) => pt.t >= WARMUP_MS).map((pt) => pt.feedLagMs))), 3),
      // What reached Kafka: events the edges generated on schedule but dropped (buffer full) do not count.
      achieved_events_per_s: Math.round(((edges.delivered + gateway.accepted) / sendMs) * 1000),
      generated_events_per_s: Math.round((sent / sendMs) * 1000),
      events_sent: edges.delivered + gateway.accepted,
      events_generated: sent,
      events_behind_schedule: skipped,
      events_via_gateway: viaGateway,
      events_kept_from_busy_gateway: gateway.busy,
      gateway_events_accepted: gateway.accepted,
      gateway_events_refused: gateway.refused,
      edge_events_dropped: edges.dropped,
      unanswered_samples: points.filter((pt) => !Number.isFinite(pt.lagEvents)).length,
      soak_process_cpu_s: sig(process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6, 3),
      load_average_1m_end: sig(loadavg()[0]!, 3),
      aggregator_events_counted: metric(agg, 'banstream_aggregator_events_consumed_total'),
      aggregator_late_events: metric(agg, 'banstream_aggregator_late_events_total'),
      aggregator_state_keys_end: metric(agg, 'banstream_aggregator_state_keys'),
      bans_emitted: metric(agg, 'banstream_aggregator_bans_emitted_total'),
      ban_tombstones: metric(agg, 'banstream_aggregator_ban_tombstones_total'),
      enforcer_cache_bans_end: cacheEntries(lastTexts.enforcer, 'bans'),
      enforcer_cache_counts_end: cacheEntries(lastTexts.enforcer, 'counts'),
      enforcer_checks: checks.done,
      enforcer_attacker_checks_denied: checks.attackerDenied,
      // Normal clients denied by the enforcer: false positives, expected 0.
      enforcer_normal_checks_denied: checks.denied - checks.attackerDenied,
      enforcer_checks_failed: checks.failed,
      samples: points.length,
    });
    mkdirSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'results'), { recursive: true });
    // Every sample beside the result, to see where memory went (bench/results is not committed).
    writeFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'results', 'soak.samples.json'), JSON.stringify(points));
    report(
      'soak',
      {
        minutes: MINUTES,
        rate: RATE,
        warmup_s: WARMUP_MS / 1000,
        sample_s: SAMPLE_MS / 1000,
        partitions: PARTITIONS,
        policies: SOAK_POLICIES.map((x) => x.id),
        traffic: DEFAULT_SHAPE,
        paths: `${GATEWAY_SHARE * 100}% of the events POSTed to the ingest gateway as Avro RequestEventBatch bodies of up to ${GATEWAY_BATCH}; the rest published straight to Kafka by ${EDGES} EdgePublishers in the soak process (one per edge id, default options); ${CHECKS_PER_TICK * (1000 / TICK_MS)} POST /v1/check a second to the enforcer sidecar; GET /v1/bans on control every ${SAMPLE_MS / 1000} s`,
        memory:
          'VmRSS from /proc/PID/status every sample; slope = least squares after the warm-up (heap_*: nodejs_heap_size_used_bytes; soak.samples.json also has nodejs_external_memory_bytes and the aggregator window state)',
        lag: "max_lag_events: events Kafka acknowledged minus events the aggregator is done with (counted, late or dead-lettered); lag_records: broker high watermarks minus the aggregator group's committed offsets, summed over partitions (events topic; _subjects: its repartition topic); enforcer feed lag: mean produce-to-applied delay per sample interval",
        target: 'memory slope flat, under 1 MB/min after warm-up (reported, not judged)',
      },
      figures,
    );
  } finally {
    stop = true;
    await Promise.all(publishers.map((x) => x.close(5_000).catch(() => undefined)));
    await pipeline?.stop();
    await deleteTopics(admin, prefix).catch((e: Error) => note(`could not delete topics: ${e.message}`));
    await deleteGroups(admin, prefix);
    await admin.disconnect();
  }
}

/** Events the aggregator is done with: counted, too late to count, or sent to the DLQ. */
function processed(text: string | undefined): number {
  return metric(text, 'banstream_aggregator_events_consumed_total') + metric(text, 'banstream_aggregator_late_events_total') + metric(text, 'banstream_aggregator_dlq_records_total');
}

function cacheEntries(text: string | undefined, cache: string): number {
  const m = new RegExp(`^banstream_enforcer_cache_entries\\{[^}]*cache="${cache}"[^}]*\\} (\\S+)$`, 'm').exec(text ?? '');
  return m ? Number(m[1]) : Number.NaN;
}

await main();
