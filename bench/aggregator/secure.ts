/**
 * `npm run bench -- aggregator --secure`: the aggregator (as a process) and its ceiling
 * (a bare kafkajs consume-and-decode, as a process) over PLAINTEXT and over SASL_SSL of
 * one broker of the run's own (bench/secure.ts), interleaved run by run, on the same
 * preloaded topic. Only the transport differs: the secured side logs in as
 * User:aggregator (SCRAM-SHA-512) over TLS and its ACLs are looked up. Figures both
 * ways (`*_secure`) and `*_secure_ratio` = secured / plaintext, in
 * bench/results/aggregator-secure.json. Fewer drains than the plain benchmark (no
 * one-worker, side-by-side or fetch-only drains) and 1,000,000 events by default, so
 * the run stays near five minutes on two cores.
 */
import { availableParallelism, loadavg } from 'node:os';
import { topicFullName } from '@banstream/kafka';
import { SCHEMA_NAMES, loadSchemaCatalog } from '@banstream/schemas';
import { median, min, note, report, sig } from '../lib.js';
import { grantBenchAcls, secureRatio, startBenchBroker, type Transport } from '../secure.js';
import { DEFAULT_SHAPE, eventSpanMs, generateEvents } from './events.js';
import { BENCH_POLICIES, LONGEST_WINDOW_MS, PARTITIONS, benchKafka, createTopics, freshOutputTopics, preload, publishPolicies, type BenchSecurity } from './kafka.js';
import { runCeilingProcess } from './ceiling-child.js';
import { cleanUp, intEnv } from './main.js';
import { summarise } from './summary.js';
import { CONSUMED_METRIC, freePort, serviceNodeArgs, timeService, type ServiceRun } from './service.js';

const EVENTS = intEnv('BENCH_AGG_EVENTS', 1_000_000);
const RUNS = intEnv('BENCH_AGG_RUNS', 3);
const TIMEOUT_MS = intEnv('BENCH_AGG_TIMEOUT_S', 180) * 1000;
const STALL_MS = intEnv('BENCH_AGG_STALL_S', 30) * 1000;
const START_MS = intEnv('BENCH_AGG_START_S', 60) * 1000;
const WORKERS = intEnv('BENCH_AGG_WORKERS', availableParallelism());
const USER = 'aggregator';

export async function secureMain(repoRoot: string): Promise<void> {
  const loadAtStart = loadavg()[0]!;
  const bench = await startBenchBroker([USER]);
  const transports: Transport[] = [bench.plaintext, bench.secure(USER)];
  const login: BenchSecurity = { ca: transports[1]!.security!.tls!.ca!, username: USER, password: bench.broker.password(USER) };
  const runId = `${Date.now()}-${process.pid}`;
  const prefix = `bench-agg-${runId}.`;
  const eventsTopic = topicFullName(prefix, 'events');
  // Topics, policies, the preload and the clean-up as the super user, over PLAINTEXT.
  const kafka = benchKafka([bench.plaintext.brokers], `bench-aggregator-${runId}`);
  const admin = kafka.admin();
  await admin.connect();
  try {
    note(`topics: ${prefix}*.v1 (${PARTITIONS} partitions)`);
    await createTopics(admin, prefix, LONGEST_WINDOW_MS);
    const probe = benchKafka([transports[1]!.brokers], 'bench-acl-probe', login).admin();
    await probe.connect();
    await grantBenchAcls(admin, prefix, () => probe.fetchTopicOffsets(eventsTopic), [USER]);
    await probe.disconnect();
    const catalog = loadSchemaCatalog();
    await publishPolicies(kafka, prefix, catalog);
    const shape = { ...DEFAULT_SHAPE, events: EVENTS, spanMs: eventSpanMs({ ...DEFAULT_SHAPE, events: EVENTS }) };
    const loaded = await (async () => {
      note(`generating ${EVENTS.toLocaleString('en')} events`);
      const set = generateEvents(shape, Date.now() - shape.spanMs);
      return preload(kafka, eventsTopic, set, catalog.codec(SCHEMA_NAMES.requestEventBatch));
    })();
    note(`preload: ${loaded.events.toLocaleString('en')} events, ${(loaded.bytes / 1e6).toFixed(1)} MB in ${(loaded.ms / 1000).toFixed(1)} s`);

    const service: ServiceRun[][] = [[], []];
    const ceiling: number[][] = [[], []];
    for (let run = 1; run <= RUNS; run++) {
      // Plaintext first on odd runs, secured first on even ones: drift hits both alike.
      for (const i of run % 2 === 1 ? [0, 1] : [1, 0]) {
        const transport = transports[i]!;
        const tag = `${run}-${transport.name}`;
        await freshOutputTopics(admin, prefix, LONGEST_WINDOW_MS);
        const port = await freePort();
        note(`run ${run}/${RUNS} over ${transport.name}: aggregator, ${WORKERS} workers`);
        const result = await timeService({
          repoRoot,
          nodeArgs: serviceNodeArgs('aggregator'),
          env: {
            ...transport.env,
            TOPIC_PREFIX: prefix,
            TOPIC_PARTITIONS: String(PARTITIONS),
            TOPIC_REPLICATION_FACTOR: '1',
            // The run made the topics; the aggregator's principal may not create any.
            TOPIC_AUTO_CREATE: 'false',
            HTTP_PORT: String(port),
            LOG_LEVEL: 'warn',
            AGGREGATOR_GROUP_ID: `${prefix}aggregator-${tag}`,
            AGGREGATOR_WORKERS: String(WORKERS),
          },
          total: loaded.events,
          timeoutMs: TIMEOUT_MS,
          stallMs: STALL_MS,
          startMs: START_MS,
        });
        service[i]!.push(result);
        note(
          `run ${run}/${RUNS} over ${transport.name}: aggregator ${Math.round(result.eventsPerS).toLocaleString('en')} events/s${result.timedOut ? ' (TIMED OUT)' : ''}, CPU ${result.cpuUsPerEvent.toFixed(2)} µs/event`,
        );

        const drained = await runCeilingProcess({
          brokers: transport.brokers,
          topic: eventsTopic,
          groupId: `${prefix}ceiling-${tag}`,
          total: loaded.events,
          timeoutMs: TIMEOUT_MS,
          decode: true,
          ...(i === 1 ? { security: login } : {}),
        });
        if (drained.timedOut || drained.events !== loaded.events) throw new Error(`ceiling over ${transport.name} counted ${drained.events} of ${loaded.events} events`);
        ceiling[i]!.push((drained.events / drained.ms) * 1000);
        note(`run ${run}/${RUNS} over ${transport.name}: ceiling ${Math.round(ceiling[i]!.at(-1)!).toLocaleString('en')} events/s`);
      }
    }

    const figures: Record<string, number> = { events: loaded.events, preload_events_per_s: Math.round((loaded.events / loaded.ms) * 1000), aggregator_workers: WORKERS };
    const sides = [0, 1].map((i): Record<string, number> => {
      const all = summarise(service[i]!);
      const top = median(ceiling[i]!);
      return {
        events_per_s: Math.round(all.rate),
        events_per_s_min: Math.round(all.min),
        ceiling_events_per_s: Math.round(top),
        ceiling_events_per_s_min: Math.round(min(ceiling[i]!)),
        ratio: sig(all.rate / top, 3),
        cpu_us_per_event: sig(all.cpuUsPerEvent, 3),
        peak_rss_mb: sig(all.peakRssMb, 3),
        timed_out: service[i]!.some((r) => r.timedOut) ? 1 : 0,
      };
    });
    const [plain, secure] = [sides[0]!, sides[1]!];
    for (const [name, value] of Object.entries(plain)) {
      figures[name] = value;
      figures[`${name}_secure`] = secure[name]!;
    }
    for (const name of ['events_per_s', 'ceiling_events_per_s', 'cpu_us_per_event']) figures[`${name}_secure_ratio`] = secureRatio(secure[name]!, plain[name]!);

    await cleanUp(admin, prefix);
    report(
      'aggregator-secure',
      {
        events: loaded.events,
        runs: RUNS,
        partitions: PARTITIONS,
        seed: shape.seed,
        policies: BENCH_POLICIES.map((p) => `${p.id} [${p.key.join(',')}] ${p.threshold.count}/${p.threshold.interval} ${p.action.type}`),
        brokers: `PLAINTEXT ${bench.plaintext.brokers}, SASL_SSL ${bench.broker.brokers}`,
        broker: "one KRaft broker of the run's own (1 GB heap), two listeners; topics, ACLs, policies and the preload as the super user over PLAINTEXT",
        plaintext: 'no TLS, no login (User:ANONYMOUS, a super user: no ACL looked up)',
        secure: 'TLS (a CA made by the run, P-256 certificate), SASL SCRAM-SHA-512 as User:aggregator, its ACLs (the documented table, and its groups under the run prefix)',
        service: `node ${serviceNodeArgs('aggregator').join(' ')} with AGGREGATOR_WORKERS=${WORKERS}, fresh group and output topics per run; ${CONSUMED_METRIC}{replay="false"} sampled every 50 ms`,
        ceiling: 'bare kafkajs consumer in a fresh node process per run, fresh group, eachBatch + RequestEventBatch decode (bench/aggregator/kafka.ts), same transport and login as the service',
        order: 'per run: aggregator then ceiling over one transport, then over the other; plaintext first on odd runs, secured first on even ones',
        service_failures: service.flat().flatMap((r, i) => (r.failure === undefined ? [] : [`drain ${i + 1}: ${r.failure}`])),
        load_average_1m: [sig(loadAtStart, 3), sig(loadavg()[0]!, 3)],
      },
      figures,
    );
  } catch (error) {
    await cleanUp(admin, prefix).catch((e: unknown) => note(`clean-up failed: ${(e as Error).message}`));
    throw error;
  } finally {
    await admin.disconnect();
    await bench.stop();
  }
}
