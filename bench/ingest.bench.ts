/**
 * npm run bench -- ingest        (needs `npm run build` and a broker: KAFKA_BROKERS, else the local stack's 127.0.0.1:19092)
 *
 * The gateway in this process, on a topic layout of its own, fed over keep-alive HTTP:
 * - avro_events_per_s / json_events_per_s: events per second from the first POST until
 *   Kafka acknowledged the last event (all in-sync replicas), batches of BATCH events as
 *   Avro single-object RequestEventBatch or JSON arrays; every event is validated,
 *   normalised, given a country from the CC0 MMDB database and re-batched by client /24;
 * - ceiling_events_per_s: a bare kafkajs producer (same idempotent settings, acks all,
 *   same events per send and sends in flight as the publisher) sending the same
 *   pre-encoded Avro batches as records, from a client made as the gateway's is
 *   (createKafka after installKafkaPatches(), so with the same kafkajs fixes), in a
 *   fresh process each round (bench/ingest/ceiling-child.ts says why); ratio = avro_events_per_s / ceiling;
 * - publish_ns_per_event: the cost of EdgePublisher.publish() on the caller's thread,
 *   timed per chunk of CHUNK calls (median and p99 over chunks).
 * Every throughput figure is the median of RUNS interleaved rounds. The machine is shared:
 * figures drift, the ratio less so.
 *
 * npm run bench -- ingest --secure   (needs `npm run build` and the Kafka jars: `npm run stack:fetch`; not the stack)
 *
 * The same rounds (no publish() timing: it never touches the network) on a broker of the
 * run's own with two listeners (bench/secure.ts), interleaved: a gateway and a ceiling
 * producer over PLAINTEXT, and another pair over SASL_SSL (TLS, SCRAM-SHA-512 as
 * User:ingest, its ACLs). Each figure both ways (`*_secure` the secured one) and
 * `*_secure_ratio` = secured / plaintext; written to bench/results/ingest-secure.json.
 */
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { createKafka, ensureTopics, installKafkaPatches, topicFullName, topicSpecs, type Kafka, type KafkaSecurity } from '@banstream/kafka';
import { createEdgePublisher, EDGE_PUBLISHER_DEFAULTS } from '@banstream/edge';
import { createIngestService, ingestEnv } from '@banstream/ingest';
import { createHttpServer, createLogger, createMetricsRegistry, loadConfig, Readiness, type Registry } from '@banstream/platform';
import { loadSchemaCatalog, SCHEMA_NAMES, type RequestEvent } from '@banstream/schemas';
import { runCeilingProcess } from './ingest/ceiling-child.js';
import { Loader, runBatches, seededEvents } from './ingest-load.js';
import { median, note, percentile, report, sig } from './lib.js';
import { grantBenchAcls, SECURE, secureRatio, startBenchBroker, type Transport } from './secure.js';

const BROKERS = process.env.KAFKA_BROKERS ?? '127.0.0.1:19092';
const EVENTS = 100_000;
const BATCH = 500;
const NETWORKS = 200;
const CONCURRENCY = 4;
const PARTITIONS = 6;
/** BENCH_RUNS=1 for a quick look. */
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const PUBLISH_EVENTS = 200_000;
const CHUNK = 1_000;
const GEO_DB = createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb');
const logger = createLogger({ service: 'bench-ingest', level: 'warn' });
const catalog = loadSchemaCatalog();
const batchCodec = catalog.codec(SCHEMA_NAMES.requestEventBatch);

async function counterValue(registry: Registry, name: string): Promise<number> {
  const metric = registry.getSingleMetric(name);
  return metric ? (await metric.get()).values.reduce((s, v) => s + v.value, 0) : 0;
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`bench: gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** Events per second through the gateway: POSTs until Kafka acknowledged them all. */
async function gatewayRun(loader: Loader, registry: Registry, bodies: Buffer[], contentType: string, events: number) {
  const delivered0 = await counterValue(registry, 'banstream_edge_events_delivered_total');
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const { retried } = await loader.postAll(bodies, contentType);
  const acceptedMs = performance.now() - started;
  await until(async () => (await counterValue(registry, 'banstream_edge_events_delivered_total')) - delivered0 >= events, 'the gateway to deliver every event');
  const deliveredMs = performance.now() - started;
  const cpu = process.cpuUsage(cpu0);
  return { perS: (events / deliveredMs) * 1000, acceptPerS: (events / acceptedMs) * 1000, cpuUsPerEvent: (cpu.user + cpu.system) / events, retried };
}

/** publish() alone, on this thread: ns per call, per chunk of CHUNK calls; then waits for delivery. */
async function publishCost(kafka: Kafka, topic: string, events: RequestEvent[]): Promise<number[]> {
  const registry = createMetricsRegistry('bench-publish', { defaultMetrics: false });
  // A budget that holds every event of a round: this measures the call, not eviction.
  const publisher = createEdgePublisher({ kafka, topic, logger, registry, catalog, budgetBytes: 512 * 1024 * 1024 });
  const perChunk: number[] = [];
  for (let round = 0; round < RUNS; round++) {
    for (let i = 0; i < events.length; i += CHUNK) {
      const t = process.hrtime.bigint();
      for (let j = i; j < i + CHUNK; j++) publisher.publish(events[j]!);
      perChunk.push(Number(process.hrtime.bigint() - t) / CHUNK);
      // Let the publisher send between chunks, as an edge's event loop would between requests.
      if ((i / CHUNK) % 20 === 19) await new Promise((r) => setImmediate(r));
    }
    await until(async () => publisher.stats().delivered === (round + 1) * events.length, 'the publisher to deliver every event');
  }
  const stats = await publisher.close();
  if (stats.delivered !== RUNS * events.length) throw new Error(`publish run lost events: ${JSON.stringify(stats)}`);
  return perChunk;
}

/** A gateway in this process on one transport, with its own metrics and HTTP server. */
async function startGateway(transport: Transport, prefix: string) {
  const registry = createMetricsRegistry(`bench-ingest-${transport.name}`, { defaultMetrics: false });
  const http = createHttpServer(logger);
  const config = loadConfig(ingestEnv, {
    ...transport.env,
    TOPIC_PREFIX: prefix,
    TOPIC_PARTITIONS: String(PARTITIONS),
    // The run made the topics; a secured gateway's principal may not create any.
    TOPIC_AUTO_CREATE: 'false',
    INGEST_GEOIP_DB: GEO_DB,
    LOG_LEVEL: 'warn',
    INGEST_ALLOW_ANONYMOUS_EDGES: 'true',
  });
  const service = createIngestService({ config, logger, registry, readiness: new Readiness(), http });
  await service.start();
  const address = await http.listen({ host: '127.0.0.1', port: 0 });
  const loader = new Loader(new URL('/v1/events', address), CONCURRENCY);
  return {
    registry,
    loader,
    async stop() {
      loader.close();
      await service.stop();
      await http.close();
    },
  };
}

interface Series {
  avro: number[];
  json: number[];
  ceiling: number[];
  avroAccept: number[];
  jsonAccept: number[];
  avroCpu: number[];
  jsonCpu: number[];
  retried: number;
}

const emptySeries = (): Series => ({ avro: [], json: [], ceiling: [], avroAccept: [], jsonAccept: [], avroCpu: [], jsonCpu: [], retried: 0 });

/** One round on one transport: the ceiling, then the gateway with Avro, then with JSON. */
async function round(series: Series, transport: Transport, topic: string, gateway: Awaited<ReturnType<typeof startGateway>>, inputs: Inputs): Promise<void> {
  series.ceiling.push(
    await runCeilingProcess({
      brokers: transport.brokers,
      ...(transport.security === undefined ? {} : { security: transport.security }),
      topic,
      events: EVENTS,
      networks: NETWORKS,
      batch: BATCH,
      t0: inputs.t0,
    }),
  );
  const avro = await gatewayRun(gateway.loader, gateway.registry, inputs.avroBodies, 'application/avro', EVENTS);
  const json = await gatewayRun(gateway.loader, gateway.registry, inputs.jsonBodies, 'application/json', EVENTS);
  series.avro.push(avro.perS);
  series.avroAccept.push(avro.acceptPerS);
  series.json.push(json.perS);
  series.jsonAccept.push(json.acceptPerS);
  series.avroCpu.push(avro.cpuUsPerEvent);
  series.jsonCpu.push(json.cpuUsPerEvent);
  series.retried += avro.retried + json.retried;
}

/** The figures of one transport's rounds (medians; minimums of the gateway's rates). */
function figuresOf(series: Series): Record<string, number> {
  const avro = median(series.avro);
  const json = median(series.json);
  const ceiling = median(series.ceiling);
  return {
    avro_events_per_s: sig(avro),
    json_events_per_s: sig(json),
    ceiling_events_per_s: sig(ceiling),
    ratio: sig(avro / ceiling, 3),
    json_ratio: sig(json / ceiling, 3),
    avro_accepted_events_per_s: sig(median(series.avroAccept)),
    json_accepted_events_per_s: sig(median(series.jsonAccept)),
    avro_events_per_s_min: sig(Math.min(...series.avro)),
    json_events_per_s_min: sig(Math.min(...series.json)),
    // CPU time of this process (gateway, publisher, kafkajs and the HTTP client) per event: less sensitive to a busy machine than the rates.
    avro_cpu_us_per_event: sig(median(series.avroCpu), 3),
    json_cpu_us_per_event: sig(median(series.jsonCpu), 3),
    retried_requests_503: series.retried,
  };
}

interface Inputs {
  avroBodies: Buffer[];
  jsonBodies: Buffer[];
  /** The events' clock, for the ceiling process to make the same batches. */
  t0: number;
}

function makeInputs(): Inputs {
  note(`inputs: ${EVENTS} events from ${NETWORKS} client /24s, batches of ${BATCH}`);
  const t0 = Date.now();
  const batches = runBatches(EVENTS, NETWORKS, BATCH, t0);
  const avroBodies = batches.map((b) => batchCodec.encode({ events: b }));
  const jsonBodies = batches.map((b) => Buffer.from(JSON.stringify(b)));
  return { avroBodies, jsonBodies, t0 };
}

const params = (brokers: string) => ({
  events_per_run: EVENTS,
  batch_events: BATCH,
  client_networks: NETWORKS,
  http_concurrency: CONCURRENCY,
  partitions: PARTITIONS,
  runs: RUNS,
  brokers,
  geo_db: '@ip-location-db/geo-whois-asn-country-mmdb',
  publisher: EDGE_PUBLISHER_DEFAULTS,
});

const clientOf = (brokers: string, security: KafkaSecurity | undefined) =>
  createKafka({ brokers: brokers.split(','), clientId: 'bench-ingest', logger, ...(security === undefined ? {} : { security }) });

async function main(): Promise<void> {
  installKafkaPatches();
  if (SECURE) return secureMain();
  const prefix = `bench-ingest-${Date.now().toString(36)}.`;
  const topic = topicFullName(prefix, 'events');
  const kafka = clientOf(BROKERS, undefined);
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, topicSpecs({ prefix, partitions: PARTITIONS, replicationFactor: 1 }));

  note(`gateway on ${BROKERS}, topic ${topic}`);
  const plaintext: Transport = { name: 'plaintext', brokers: BROKERS, security: undefined, env: { KAFKA_BROKERS: BROKERS } };
  const gateway = await startGateway(plaintext, prefix);
  const inputs = makeInputs();
  const series = emptySeries();
  for (let r = 0; r < RUNS; r++) {
    note(`round ${r + 1}/${RUNS}: ceiling, avro, json`);
    await round(series, plaintext, topic, gateway, inputs);
  }
  await gateway.stop();

  note('publish() on the caller thread');
  const publishNs = await publishCost(kafka, topic, seededEvents(PUBLISH_EVENTS, NETWORKS, 7, Date.now()));

  await admin.deleteTopics({ topics: topicSpecs({ prefix, partitions: PARTITIONS, replicationFactor: 1 }).map((t) => t.name) });
  await admin.disconnect();

  const { retried_requests_503, ...figures } = figuresOf(series);
  report(
    'ingest',
    { ...params(BROKERS), publish_events: PUBLISH_EVENTS, publish_chunk: CHUNK },
    {
      ...figures,
      publish_ns_per_event: sig(median(publishNs), 3),
      publish_ns_per_event_p99: sig(percentile(publishNs, 99), 3),
      retried_requests_503: retried_requests_503!,
    },
  );
}

/** The rounds over PLAINTEXT and over SASL_SSL on one broker, interleaved (the order alternates each round). */
async function secureMain(): Promise<void> {
  const loadAtStart = loadavg()[0]!;
  const bench = await startBenchBroker(['ingest']);
  try {
    const prefix = `bench-ingest-${Date.now().toString(36)}.`;
    const topic = topicFullName(prefix, 'events');
    const transports = [bench.plaintext, bench.secure('ingest')];
    const kafka = transports.map((t) => clientOf(t.brokers, t.security));
    const admin = kafka[0]!.admin();
    await admin.connect();
    await ensureTopics(admin, topicSpecs({ prefix, partitions: PARTITIONS, replicationFactor: 1 }));
    const probe = kafka[1]!.producer({ idempotent: true });
    await grantBenchAcls(admin, prefix, async () => {
      await probe.connect();
      await probe.send({ topic, acks: -1, messages: [{ key: 'acl-probe', value: Buffer.from('') }] });
    });
    await probe.disconnect();

    note(`gateways on ${transports.map((t) => `${t.name} ${t.brokers}`).join(' and ')}, topic ${topic}`);
    const gateways = [await startGateway(transports[0]!, prefix), await startGateway(transports[1]!, prefix)];
    const inputs = makeInputs();
    const series = [emptySeries(), emptySeries()];
    for (let r = 0; r < RUNS; r++) {
      const order = r % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) {
        note(`round ${r + 1}/${RUNS} over ${transports[i]!.name}: ceiling, avro, json`);
        await round(series[i]!, transports[i]!, topic, gateways[i]!, inputs);
      }
    }
    for (const g of gateways) await g.stop();
    await admin.disconnect();

    const [plain, secure] = series.map(figuresOf) as [Record<string, number>, Record<string, number>];
    const figures: Record<string, number> = {};
    for (const [name, value] of Object.entries(plain)) {
      figures[name] = value;
      figures[`${name}_secure`] = secure[name]!;
    }
    for (const name of ['avro_events_per_s', 'json_events_per_s', 'ceiling_events_per_s']) figures[`${name}_secure_ratio`] = secureRatio(secure[name]!, plain[name]!);
    for (const name of ['avro_cpu_us_per_event', 'json_cpu_us_per_event']) figures[`${name}_secure_ratio`] = secureRatio(secure[name]!, plain[name]!);
    report(
      'ingest-secure',
      {
        ...params(`PLAINTEXT ${bench.plaintext.brokers}, SASL_SSL ${bench.broker.brokers}`),
        broker: "one KRaft broker of the run's own (1 GB heap), two listeners; topics and ACLs as the super user",
        plaintext: 'no TLS, no login (User:ANONYMOUS, a super user: no ACL looked up)',
        secure: 'TLS (a CA made by the run, P-256 certificate), SASL SCRAM-SHA-512 as User:ingest, its ACLs (WRITE on events, IDEMPOTENT_WRITE)',
        order: 'per round: plaintext then secured, the other way round every other round',
        // Other work on the machine skews every figure: the 1-minute load average before and after.
        load_average_1m: [sig(loadAtStart, 3), sig(loadavg()[0]!, 3)],
      },
      figures,
    );
  } finally {
    await bench.stop();
  }
}

await main();
