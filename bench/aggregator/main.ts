/**
 * The aggregator benchmark proper (bench/aggregator.bench.ts builds the packages first,
 * then imports this). See that file for what is measured.
 */
import { availableParallelism, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseBrokers, topicFullName, type Admin } from '@banstream/kafka';
import { stackSettings, stackStatus, stackUp } from '../../scripts/stack/index.mjs';
import { SCHEMA_NAMES, loadSchemaCatalog } from '@banstream/schemas';
import { median, min, note, report, sig } from '../lib.js';
import { DEFAULT_SHAPE, eventSpanMs, generateEvents } from './events.js';
import {
  BENCH_COST_POLICIES,
  BENCH_POLICIES,
  CEILING_FETCH,
  LONGEST_WINDOW_MS,
  PARTITIONS,
  benchKafka,
  createTopics,
  deleteGroups,
  deleteTopics,
  freshOutputTopics,
  preload,
  publishPolicies,
} from './kafka.js';
import { serviceNodeFlags } from '../../scripts/run/node-flags.mjs';
import { runCeilingProcess, runParallelCeiling } from './ceiling-child.js';
import { CONSUMED_METRIC, freePort, serviceNodeArgs, timeService, type ServiceRun } from './service.js';
import { summarise } from './summary.js';

export function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw.replaceAll('_', ''));
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name}: expected a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

const EVENTS = intEnv('BENCH_AGG_EVENTS', 2_000_000);
const RUNS = intEnv('BENCH_AGG_RUNS', 3);
const TIMEOUT_MS = intEnv('BENCH_AGG_TIMEOUT_S', 180) * 1000;
const STALL_MS = intEnv('BENCH_AGG_STALL_S', 30) * 1000;
const START_MS = intEnv('BENCH_AGG_START_S', 60) * 1000;
const SKIP_SERVICE = process.env.BENCH_AGG_SKIP_SERVICE === '1';
/** `npm run bench -- aggregator --costs`: events with costs and a policy with route costs, reported as `aggregator-costs`. */
const COSTS = process.argv.includes('--costs');
const POLICIES = COSTS ? BENCH_COST_POLICIES : BENCH_POLICIES;
/** AGGREGATOR_WORKERS of the measured service: one per core unless set. */
const WORKERS = intEnv('BENCH_AGG_WORKERS', availableParallelism());
/** The service's own fetch size unless set (README "Configuration": drain speed against ban latency). */
const FETCH_KB = process.env.AGGREGATOR_FETCH_KB_PER_PARTITION;
/**
 * Development only: another build's entry point for the service process (to compare
 * builds back to back), started with that build's own node flags (`banstream.nodeFlags`
 * of the package.json beside its dist/), as every launcher would start it.
 */
const SERVICE_NODE_ARGS = process.env.BENCH_AGG_SERVICE_MAIN
  ? // <root>/services/aggregator/dist/main.js
    [...serviceNodeFlags('aggregator', resolve(process.env.BENCH_AGG_SERVICE_MAIN, '../../../..')), process.env.BENCH_AGG_SERVICE_MAIN]
  : serviceNodeArgs('aggregator');

async function kafkaConnection(): Promise<{ brokers: string; redisUrl: string | undefined; startedStack: boolean }> {
  if (process.env.KAFKA_BROKERS) return { brokers: process.env.KAFKA_BROKERS, redisUrl: process.env.REDIS_URL, startedStack: false };
  const settings = stackSettings();
  const before = stackStatus(settings);
  const running = before.kafka.startsWith('running') && before.redis.startsWith('running');
  if (!running) note('local stack is not running: starting it (npm run stack:up); it stays up afterwards (npm run stack:down)');
  const connection = await stackUp(settings, (line) => note(`stack: ${line}`));
  return { brokers: connection.KAFKA_BROKERS, redisUrl: connection.REDIS_URL, startedStack: !running };
}

export async function main(repoRoot: string): Promise<void> {
  const loadAtStart = loadavg()[0]!;
  const connection = await kafkaConnection();
  const runId = `${Date.now()}-${process.pid}`;
  const prefix = `bench-agg-${runId}.`;
  const eventsTopic = topicFullName(prefix, 'events');
  const kafka = benchKafka(parseBrokers(connection.brokers), `bench-aggregator-${runId}`);
  const admin = kafka.admin();
  await admin.connect();
  const catalog = loadSchemaCatalog();
  const batchCodec = catalog.codec(SCHEMA_NAMES.requestEventBatch);

  try {
    note(`topics: ${prefix}*.v1 (${PARTITIONS} partitions)`);
    await createTopics(admin, prefix, LONGEST_WINDOW_MS);
    await publishPolicies(kafka, prefix, catalog, POLICIES);

    const shape = { ...DEFAULT_SHAPE, costs: COSTS, events: EVENTS, spanMs: eventSpanMs({ ...DEFAULT_SHAPE, events: EVENTS }) };
    // The event set goes out of scope here: its memory is not the measurements' business.
    const { loaded, ips, keys, maxBatchSpanMs } = await (async () => {
      note(`generating ${EVENTS.toLocaleString('en')} events`);
      const set = generateEvents(shape, Date.now() - shape.spanMs);
      note(`preload: ${set.batches.length} batch records over ${set.distinctKeys} keys`);
      const info = { ips: set.ips.length, keys: set.distinctKeys, maxBatchSpanMs: set.maxBatchSpanMs };
      return { loaded: await preload(kafka, eventsTopic, set, batchCodec), ...info };
    })();
    note(`preload: ${loaded.events.toLocaleString('en')} events, ${(loaded.bytes / 1e6).toFixed(1)} MB in ${(loaded.ms / 1000).toFixed(1)} s`);

    const ceiling: number[] = [];
    const parallelCeiling: number[] = [];
    const fetchOnly: number[] = [];
    const service: ServiceRun[] = [];
    const oneWorker: ServiceRun[] = [];

    const runAggregator = async (run: number, workers: number): Promise<ServiceRun> => {
      const groupId = `${prefix}aggregator-${run}-w${workers}`;
      const port = await freePort();
      const env: Record<string, string> = {
        KAFKA_BROKERS: connection.brokers,
        TOPIC_PREFIX: prefix,
        TOPIC_PARTITIONS: String(PARTITIONS),
        TOPIC_REPLICATION_FACTOR: '1',
        HTTP_PORT: String(port),
        LOG_LEVEL: 'warn',
        AGGREGATOR_GROUP_ID: groupId,
        AGGREGATOR_WORKERS: String(workers),
        ...(FETCH_KB === undefined ? {} : { AGGREGATOR_FETCH_KB_PER_PARTITION: FETCH_KB }),
        ...(connection.redisUrl === undefined ? {} : { REDIS_URL: connection.redisUrl }),
      };
      await freshOutputTopics(admin, prefix, LONGEST_WINDOW_MS);
      const what = `aggregator, ${workers} worker${workers === 1 ? '' : 's'}`;
      note(`run ${run}/${RUNS}: ${what} (group ${groupId}, metrics on :${port})`);
      const result = await timeService({
        repoRoot,
        nodeArgs: SERVICE_NODE_ARGS,
        env,
        total: loaded.events,
        timeoutMs: TIMEOUT_MS,
        stallMs: STALL_MS,
        startMs: START_MS,
      });
      note(
        `run ${run}/${RUNS}: ${what} ${Math.round(result.eventsPerS).toLocaleString('en')} events/s, ` +
          `reached ${result.reached.toLocaleString('en')}${result.timedOut ? ' (TIMED OUT)' : ''}, peak RSS ${result.peakRssMb.toFixed(0)} MB, ` +
          `CPU ${result.cpuUsPerEvent.toFixed(2)} µs/event, ${result.replayed.toLocaleString('en')} events replayed`,
      );
      return result;
    };

    for (let run = 1; run <= RUNS; run++) {
      if (!SKIP_SERVICE) {
        service.push(await runAggregator(run, WORKERS));
        if (WORKERS > 1) oneWorker.push(await runAggregator(run, 1));
      }

      const groupId = `${prefix}ceiling-${run}`;
      const job = { brokers: connection.brokers, topic: eventsTopic, timeoutMs: TIMEOUT_MS };
      const drained = await runCeilingProcess({ ...job, groupId, total: loaded.events, decode: true });
      if (drained.timedOut) throw new Error(`ceiling consumer saw ${drained.events} of ${loaded.events} events within ${TIMEOUT_MS} ms`);
      if (drained.events !== loaded.events) throw new Error(`ceiling consumer counted ${drained.events} events, expected ${loaded.events}`);
      ceiling.push((drained.events / drained.ms) * 1000);
      note(`run ${run}/${RUNS}: ceiling ${Math.round(ceiling.at(-1)!).toLocaleString('en')} events/s`);

      if (WORKERS > 1) {
        // Like for like with the workers: as many bare consumers, each draining its share.
        const side = await runParallelCeiling({ ...job, groupId: `${prefix}ceiling-parallel-${run}`, total: loaded.events, decode: true }, WORKERS);
        if (side.timedOut || side.events !== loaded.events) throw new Error(`${WORKERS} ceiling consumers counted ${side.events} events, expected ${loaded.events}`);
        parallelCeiling.push((side.events / side.ms) * 1000);
        note(`run ${run}/${RUNS}: ${WORKERS} ceiling consumers side by side ${Math.round(parallelCeiling.at(-1)!).toLocaleString('en')} events/s`);
      }

      // Context for the ceiling: the same drain without decoding (records counted, events/s
      // from the known total), i.e. what kafkajs's fetch alone allows.
      const rawGroup = `${prefix}fetch-only-${run}`;
      const raw = await runCeilingProcess({ ...job, groupId: rawGroup, total: loaded.records, decode: false });
      if (raw.timedOut) throw new Error(`fetch-only consumer saw ${raw.events} of ${loaded.records} records within ${TIMEOUT_MS} ms`);
      fetchOnly.push((loaded.events / raw.ms) * 1000);
    }

    const ceilingMedian = median(ceiling);
    const figures: Record<string, number> = {
      events: loaded.events,
      batch_records: loaded.records,
      preload_events_per_s: Math.round((loaded.events / loaded.ms) * 1000),
      preload_s: sig(loaded.ms / 1000, 3),
      avg_record_bytes: Math.round(loaded.bytes / loaded.records),
      avg_event_bytes: sig(loaded.bytes / loaded.events, 3),
      ceiling_events_per_s: Math.round(ceilingMedian),
      ceiling_events_per_s_min: Math.round(min(ceiling)),
      fetch_only_events_per_s: Math.round(median(fetchOnly)),
    };
    if (service.length > 0) {
      const all = summarise(service);
      Object.assign(figures, {
        aggregator_workers: WORKERS,
        events_per_s: Math.round(all.rate),
        events_per_s_min: Math.round(all.min),
        ratio: sig(all.rate / ceilingMedian, 3),
        timed_out: [...service, ...oneWorker].some((r) => r.timedOut) ? 1 : 0,
        aggregator_reached_events_min: min([...service, ...oneWorker].map((r) => r.reached)),
        peak_rss_mb: sig(all.peakRssMb, 3),
        startup_to_first_event_s: sig(all.startupMs / 1000, 3),
        // Less noisy than events/s on a shared machine: what one event costs the service (all its processes).
        cpu_us_per_event: sig(all.cpuUsPerEvent, 3),
        // The supervisor's part of both: what serving /metrics (sampled every 50 ms here) for its workers costs.
        cpu_us_per_event_supervisor: sig(all.supervisorCpuUsPerEvent, 3),
        peak_rss_mb_supervisor: sig(all.supervisorPeakRssMb, 3),
        // The join race (summary.ts): runs whose workers did not join together, left out of the rates above
        // unless every run raced (steady_runs 0).
        steady_runs: all.steadyRuns,
        raced_runs: all.racedRuns,
        events_replayed_max: all.maxReplayed,
      });
      if (parallelCeiling.length > 0) {
        Object.assign(figures, {
          ceiling_parallel_events_per_s: Math.round(median(parallelCeiling)),
          ratio_to_parallel_ceiling: sig(all.rate / median(parallelCeiling), 3),
        });
      }
      if (oneWorker.length > 0) {
        const one = summarise(oneWorker);
        Object.assign(figures, {
          events_per_s_one_worker: Math.round(one.rate),
          ratio_one_worker: sig(one.rate / ceilingMedian, 3),
          cpu_us_per_event_one_worker: sig(one.cpuUsPerEvent, 3),
          cpu_us_per_event_supervisor_one_worker: sig(one.supervisorCpuUsPerEvent, 3),
        });
      }
    }

    await cleanUp(admin, prefix);
    report(
      COSTS ? 'aggregator-costs' : 'aggregator',
      {
        events: loaded.events,
        ...(COSTS ? { costs: 'events: POST /login 5, one GET in ten 3, else 1; bench-ip-ban: POST /login costs 10 (its costs rule replaces the event cost)' } : {}),
        runs: RUNS,
        partitions: PARTITIONS,
        seed: shape.seed,
        event_span_s: shape.spanMs / 1000,
        event_times: 'evenly over event_span_s ending at generation time; batches produced in order of their first event',
        max_batch_span_ms: maxBatchSpanMs,
        ips,
        partition_keys: keys,
        ipv4_prefixes_24: shape.v4Prefixes,
        ipv6_prefixes_48: shape.v6Prefixes,
        hot_ips: `${shape.hotIps} IPs send ${shape.hotShare * 100}% of events`,
        users: `${shape.userShare * 100}% of events from ${shape.users} users`,
        requests: `GET / 200; ${shape.loginShare * 100}% POST /login, ${shape.loginFailureShare * 100}% of them 401`,
        batch_events: `at most ${shape.batchEvents} events per record, one key per record`,
        policies: POLICIES.map((p) => `${p.id} [${p.key.join(',')}] ${p.threshold.count}/${p.threshold.interval} ${p.action.type}${p.costs ? ` costs ${JSON.stringify(p.costs)}` : ''}`),
        preload: 'kafkajs producer, acks -1, no compression, 8 records per request, 8 requests in flight',
        ceiling: `bare kafkajs consumer in a fresh node process per run, fresh group, fromBeginning, eachBatch + RequestEventBatch decode, no commits, maxBytesPerPartition ${CEILING_FETCH.maxBytesPerPartition}, maxBytes ${CEILING_FETCH.maxBytes}, partitionsConsumedConcurrently ${CEILING_FETCH.partitionsConsumedConcurrently}`,
        fetch_only: 'the ceiling consumer without the decode, counting records (events/s from the known total)',
        service: SKIP_SERVICE
          ? 'skipped (BENCH_AGG_SKIP_SERVICE=1)'
          : `node ${SERVICE_NODE_ARGS.join(' ')} with AGGREGATOR_WORKERS=${WORKERS}${WORKERS > 1 ? ' (and again with 1: *_one_worker)' : ''}, fresh AGGREGATOR_GROUP_ID and output topics (all but events and policies recreated empty) per run; ${CONSUMED_METRIC}{replay="false"} summed over the workers, sampled every 50 ms; rate between the first sample above 0 and the first sample at the total; CPU and peak RSS summed over the service's processes; rates and CPU over the runs without replay (steady_runs; raced_runs, whose workers did not join the group together, are left out: bench/aggregator/summary.ts)`,
        ceiling_parallel:
          WORKERS > 1
            ? `${WORKERS} ceiling consumers side by side, each in a group of its own draining partitions p % ${WORKERS} = its index (the others paused), timed from the first one's first batch to the last one's end`
            : 'not run (1 worker)',
        aggregator_fetch_kb_per_partition: FETCH_KB ?? 'service default',
        service_failures: service.flatMap((r, i) => (r.failure === undefined ? [] : [`run ${i + 1}: ${r.failure}`])),
        run_order: `per run: ${SKIP_SERVICE ? '' : WORKERS > 1 ? `aggregator (${WORKERS} workers), aggregator (1 worker), ` : 'aggregator, '}ceiling, ${WORKERS > 1 ? `${WORKERS} ceiling consumers, ` : ''}fetch-only`,
        stack_started_by_bench: connection.startedStack,
        // Other work on the machine skews every figure: the 1-minute load average before and after.
        load_average_1m: [sig(loadAtStart, 3), sig(loadavg()[0]!, 3)],
      },
      figures,
    );
  } catch (error) {
    await cleanUp(admin, prefix).catch((e: unknown) => note(`clean-up failed: ${(e as Error).message}`));
    throw error;
  } finally {
    await admin.disconnect();
  }
}

export async function cleanUp(admin: Admin, prefix: string): Promise<void> {
  const groups = await deleteGroups(admin, prefix);
  const topics = await deleteTopics(admin, prefix);
  note(`deleted ${topics.length} topics and ${groups.length} consumer groups under ${prefix}`);
}
