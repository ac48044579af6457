/**
 * npm run bench -- failover
 *
 * A three-broker KRaft cluster of its own (the local stack's code, a temporary folder),
 * topics with three replicas and min.insync.replicas 2, the built gateway, aggregator
 * and two enforcer sidecars, and clients posting a steady background load through the
 * gateway. Floods (one post of THRESHOLD + 1 events from one address, crossing a
 * per-IP ban policy) are timed from just before the post to the ban at both enforcers
 * (POST /v1/check polled every 10 ms):
 * - first without a failure, one after another: the ceiling;
 * - then the broker leading the floods' events and bans partitions is killed with
 *   SIGKILL, and a flood starts every FLOOD_GAP_MS while it is down (leaders being
 *   elected, then moved), each timed on its own; the broker is then started again.
 * events_lost: events the gateway answered 202 for that never reached the events topic.
 * kafka_write_after_kill_ms: Kafka's own part, the floods' floor (failover-probe.ts): a
 * write with acks=all started at the kill, to a partition the killed broker led, by a
 * client made as the services' are, acknowledged that long after it.
 * recovery_s: from the kill to every partition having a live leader and every service
 * answering /readyz 200.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { eventPartitionKey, keyPartition } from '@banstream/core';
import { createKafka, ensureTopics, installKafkaPatches, topicFullName, topicSpecs } from '@banstream/kafka';
import { createLogger } from '@banstream/platform';
import { loadSchemaCatalog, SCHEMA_NAMES } from '@banstream/schemas';
import { stackDown, stackUp, startKafkaNode, stopKafkaNode } from '../scripts/stack/index.mjs';
import { median, note, percentile, report, sig } from './lib.js';
import { benchKafka, publishPolicies } from './aggregator/kafka.js';
import { metricSum } from './aggregator/service.js';
import { freePort, serviceNodeArgs } from '../test/support/processes.js';
import { threeBrokerSettings } from './three-brokers.js';
import { leaders, readTopic, writeFloodsFile } from './failover-records.js';
import { FailoverProbe } from './failover-probe.js';

const PARTITIONS = 3;
const THRESHOLD = 100;
const FLOODS_CALM = 40;
const DOWN_MS = 20_000;
const FLOOD_GAP_MS = 250;
const BACKGROUND_POSTERS = 6;
const BACKGROUND_BATCH = 20;
const HOST = 'failover.example';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Service {
  name: string;
  url: string;
  child: ChildProcess;
}

function posted(ip: string) {
  return { eventId: randomUUID(), timestamp: Date.now(), ip, method: 'GET', host: HOST, path: '/', status: 200, edgeId: 'bench' };
}

async function ready(s: Service): Promise<boolean> {
  return (await fetch(`${s.url}/readyz`).catch(() => undefined))?.status === 200;
}

async function denied(s: Service, ip: string): Promise<boolean> {
  const res = await fetch(`${s.url}/v1/check`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ip, method: 'GET', host: 'shop.example', path: '/' }),
  }).catch(() => undefined);
  return ((await res?.json().catch(() => undefined)) as { allowed?: boolean } | undefined)?.allowed === false;
}

async function main(): Promise<void> {
  // Before the stack's code loads kafkajs: patches that replace its modules must be in
  // first, or the probe's client is not made as the services' are.
  const patches = installKafkaPatches();
  const missing = Object.entries(patches).filter(([, installed]) => !installed);
  if (missing.length > 0) throw new Error(`kafkajs patches not installed in the benchmark's process: ${missing.map(([name]) => name).join(', ')}`);
  const { dir, settings } = await threeBrokerSettings('failover');
  const children: ChildProcess[] = [];
  // BENCH_LOG_DIR keeps each service's whole output (with LOG_LEVEL=info, to see what a failover did) and Kafka's logs.
  const logDir = process.env.BENCH_LOG_DIR;
  if (logDir) mkdirSync(logDir, { recursive: true });
  let posting = false;
  const began = performance.now();
  const elapsed = () => `${Math.round((performance.now() - began) / 1000)} s`;
  try {
    note(`starting a three-broker cluster in ${dir}`);
    const { KAFKA_BROKERS, REDIS_URL } = await stackUp(settings, () => undefined);
    const prefix = `bench-failover-${Date.now()}.`;
    const kafka = benchKafka(KAFKA_BROKERS.split(','), `bench-failover-${process.pid}`);
    const admin = kafka.admin();
    await admin.connect();
    const specs = topicSpecs({ prefix, partitions: PARTITIONS, replicationFactor: 3 });
    await ensureTopics(admin, specs);
    // Measured from a settled cluster: every partition led and fully replicated.
    const settled = async () =>
      (
        await leaders(
          admin,
          specs.map((t) => t.name),
        ).catch(() => undefined)
      )?.every((l) => l.leader >= 0 && l.isr === 3) === true;
    for (let i = 0; !(await settled()); i++) {
      if (i > 300) throw new Error('the topics did not get three in-sync replicas within 30 s');
      await sleep(100);
    }
    const catalog = loadSchemaCatalog();
    await publishPolicies(kafka, prefix, catalog, [{ id: 'flood', key: ['ip'], threshold: { count: THRESHOLD, interval: '1m' }, action: { type: 'ban', banDuration: '10m' } }]);
    const env = {
      PATH: process.env.PATH ?? '',
      KAFKA_BROKERS,
      REDIS_URL,
      TOPIC_PREFIX: prefix,
      TOPIC_PARTITIONS: String(PARTITIONS),
      TOPIC_REPLICATION_FACTOR: '3',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
    };
    const start = async (name: string, extra: Record<string, string>): Promise<Service> => {
      const port = await freePort();
      const child = spawn(process.execPath, serviceNodeArgs(name), { env: { ...env, ...extra, HTTP_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      // Kept for a failure message; stdout stays the result line's.
      let output = '';
      const log = logDir ? createWriteStream(`${logDir}/${name}-${port}.log`) : undefined;
      for (const stream of [child.stdout, child.stderr]) {
        stream?.on('data', (d: Buffer) => (output = `${output}${d.toString()}`.slice(-4000)));
        if (log) stream?.pipe(log, { end: false });
      }
      const s = { name, url: `http://127.0.0.1:${port}`, child };
      for (let i = 0; !(await ready(s)); i++) {
        if (i > 900) throw new Error(`${name} not ready after 90 s (exit: ${child.exitCode ?? child.signalCode ?? 'still running'}); its last output:\n${output}`);
        await sleep(100);
      }
      return s;
    };
    // Events held back by the failover arrive late: a grace longer than it counts them.
    const aggregator = await start('aggregator', { AGGREGATOR_GROUP_ID: `${prefix}aggregator`, AGGREGATOR_GRACE_MS: '60000', GEO_ALERT_ENABLED: 'false' });
    const enforcers = [await start('enforcer', {}), await start('enforcer', {})];
    const gateway = await start('ingest', { INGEST_ALLOW_ANONYMOUS_EDGES: 'true' });
    const services = [gateway, aggregator, ...enforcers];
    note(`cluster and services ready after ${elapsed()}`);

    /** Event id -> its address and when the gateway answered 202 (ms since the kill's reference point, for a loss report). */
    const acknowledged = new Map<string, { ip: string; at: number }>();
    let refusedPosts = 0;
    const post = async (batch: ReturnType<typeof posted>[]): Promise<boolean> => {
      const res = await fetch(`${gateway.url}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) }).catch(() => undefined);
      await res?.arrayBuffer();
      if (res?.status !== 202) {
        refusedPosts++;
        return false;
      }
      const at = performance.now();
      for (const e of batch) acknowledged.set(e.eventId, { ip: e.ip, at });
      return true;
    };
    // Background: 600 clients, each well under the threshold per minute.
    posting = true;
    const background = Array.from({ length: BACKGROUND_POSTERS }, async (_, w) => {
      for (let n = w; posting; n += BACKGROUND_POSTERS) {
        await post(Array.from({ length: BACKGROUND_BATCH }, (_, i) => posted(`10.${70 + ((n * BACKGROUND_BATCH + i) % 3)}.${(n * 7 + i) % 200}.9`)));
        await sleep(200);
      }
    });

    const topicNames = ['events', 'bans'].map((t) => topicFullName(prefix, t as 'events' | 'bans'));
    const before = await leaders(admin, topicNames);
    const victim = before.find((l) => l.topic === topicNames[0] && l.partition === 0)!.leader;
    const led = (topic: string, key: string) => before.find((l) => l.topic === topic && l.partition === keyPartition(key, PARTITIONS))!.leader === victim;
    const probeLogger = createLogger({ service: 'bench', level: (process.env.BENCH_LOG_LEVEL ?? 'fatal') as Parameters<typeof createLogger>[0]['level'], destination: process.stderr });
    const probeKafka = createKafka({ clientId: 'bench-failover-probe', brokers: KAFKA_BROKERS.split(','), logger: probeLogger });
    const brokerIds = (await admin.describeCluster()).brokers.map((b) => b.nodeId);
    const probe = await FailoverProbe.start(probeKafka, probeLogger, admin, `${prefix}probe`, victim, brokerIds);
    const ips: string[] = [];
    for (let i = 0; ips.length < FLOODS_CALM + DOWN_MS / FLOOD_GAP_MS && i < 1 << 16; i++) {
      const ip = `198.19.${i >> 8}.${i & 255}`;
      if (led(topicNames[0]!, eventPartitionKey(ip)) && led(topicNames[1]!, `ip:${ip}`)) ips.push(ip);
    }
    /** Wall-clock time of each flood's post, to line up with Kafka's record timestamps afterwards. */
    const postedAt = new Map<string, number>();
    /** For BENCH_FLOODS_FILE: when the gateway answered each flood's post, and each enforcer first denied it. */
    const answeredAt = new Map<string, number>();
    const deniedAt = new Map<string, number>();
    const flood = async (ip: string): Promise<number> => {
      const at = performance.now();
      postedAt.set(ip, Date.now());
      const batch = Array.from({ length: THRESHOLD + 1 }, () => posted(ip));
      while (!(await post(batch))) await sleep(100);
      answeredAt.set(ip, Date.now());
      const pending = new Set(enforcers);
      while (pending.size > 0) {
        if (performance.now() - at > 120_000) throw new Error(`flood ${ip} not banned at every enforcer within 120 s`);
        // Both at once: asked one after the other, a loaded machine added one check's time to each turn.
        await Promise.all(
          [...pending].map(async (s) => {
            if (await denied(s, ip)) {
              pending.delete(s);
              deniedAt.set(`${s.url} ${ip}`, Date.now());
            }
          }),
        );
        if (pending.size > 0) await sleep(10);
      }
      return performance.now() - at;
    };

    await sleep(5_000); // the background load reaches a steady state first
    note(`${FLOODS_CALM} floods without a failure (${elapsed()})`);
    const calm: number[] = [];
    for (const ip of ips.slice(0, FLOODS_CALM)) {
      calm.push(await flood(ip));
      await sleep(200);
    }

    note(`SIGKILL of broker ${victim} (leads events and bans partitions of every flood); down for ${DOWN_MS / 1000} s (${elapsed()})`);
    const killedAt = performance.now();
    const killedAtWall = Date.now();
    await stopKafkaNode(settings, victim, 'SIGKILL');
    // The wall-clock moment, to line up with the brokers' and services' logs.
    note(`broker ${victim} killed at ${new Date(killedAtWall).toISOString()}`);
    const kafkaWrite = probe.write(killedAt);
    const duringIps = ips.slice(FLOODS_CALM);
    const during = Promise.all(
      duringIps.map(async (ip, i) => {
        await sleep(i * FLOOD_GAP_MS);
        return flood(ip);
      }),
    );
    let leadersMovedMs = Number.NaN;
    let recoveryMs = Number.NaN;
    let unreadyServices = new Set<string>();
    while (performance.now() - killedAt < 120_000) {
      const now = await leaders(admin, topicNames).catch(() => undefined);
      if (Number.isNaN(leadersMovedMs) && now?.every((l) => l.leader >= 0 && l.leader !== victim)) leadersMovedMs = performance.now() - killedAt;
      const states = await Promise.all(services.map(async (s) => [s.name, await ready(s)] as const));
      for (const [name, ok] of states) if (!ok) unreadyServices.add(name);
      if (!Number.isNaN(leadersMovedMs) && states.every(([, ok]) => ok)) {
        recoveryMs = performance.now() - killedAt;
        break;
      }
      await sleep(50);
    }
    await sleep(Math.max(0, DOWN_MS - (performance.now() - killedAt)));
    const restartedAt = performance.now();
    await startKafkaNode(settings, victim, () => undefined);
    const failover = await during;
    const kafkaWriteMs = await kafkaWrite;
    await probe.stop();
    let isrMs = Number.NaN;
    while (performance.now() - restartedAt < 120_000) {
      // A metadata request may fail while the restarted broker rejoins: asked again at the next turn.
      if ((await leaders(admin, topicNames).catch(() => undefined))?.every((l) => l.isr === 3)) {
        isrMs = performance.now() - restartedAt;
        break;
      }
      await sleep(100);
    }
    posting = false;
    await Promise.all(background);
    note(`every flood banned, the broker back in every ISR; reading the topics (${elapsed()})`);

    // Every acknowledged event is on the events topic once the gateway has sent its buffer.
    const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
    let lost = acknowledged.size;
    let lostIds: string[] = [];
    // Where the time went: when the gateway's record of each flood and the aggregator's ban were written (CreateTime).
    const eventWritten = new Map<string, number>();
    for (let attempt = 0; attempt < 30 && lost > 0; attempt++) {
      if (attempt > 0) await sleep(2_000);
      const seen = new Set<string>();
      await readTopic(kafka, admin, topicNames[0]!, (v, t) => {
        const { events } = codec.decode(v);
        for (const e of events) {
          seen.add(e.eventId);
          if (postedAt.has(e.ip) && !eventWritten.has(e.ip)) eventWritten.set(e.ip, t);
        }
      });
      lostIds = [...acknowledged.keys()].filter((id) => !seen.has(id));
      lost = lostIds.length;
    }
    const banWritten = new Map<string, number>();
    await readTopic(kafka, admin, topicNames[1]!, (_v, t, key) => {
      if (!banWritten.has(key)) banWritten.set(key, t);
    });
    const split = (ips: string[]) => {
      const written = ips.map((ip) => (eventWritten.get(ip) ?? Number.NaN) - postedAt.get(ip)!);
      const decided = ips.map((ip) => (banWritten.get(`ip:${ip}`) ?? Number.NaN) - postedAt.get(ip)!);
      // The last hop alone: from the ban's write to the last enforcer denying the address.
      const applied = ips.map((ip) => Math.max(...enforcers.map((e) => deniedAt.get(`${e.url} ${ip}`) ?? Number.NaN)) - (banWritten.get(`ip:${ip}`) ?? Number.NaN));
      const p99 = (xs: number[]) => (xs.some(Number.isNaN) ? Number.NaN : percentile(xs, 99));
      return { written: p99(written), decided: p99(decided), applied: p99(applied) };
    };
    const calmSplit = split(ips.slice(0, FLOODS_CALM));
    const failoverSplit = split(duringIps);
    // BENCH_FLOODS_FILE: each flood on a line (where a slow one's time went).
    if (process.env.BENCH_FLOODS_FILE) {
      const times = { postedAt, answeredAt, eventWritten, banWritten, deniedAt, enforcerUrls: enforcers.map((e) => e.url) };
      writeFloodsFile(process.env.BENCH_FLOODS_FILE, ips.slice(0, FLOODS_CALM), duringIps, killedAtWall, times);
    }
    unreadyServices = new Set([...unreadyServices].sort());
    // The gateway's own books: what it took, what Kafka acknowledged, what it dropped and why.
    const gatewayMetrics = await (await fetch(`${gateway.url}/metrics`)).text();
    const sum = (name: string) => metricSum(gatewayMetrics, name) ?? Number.NaN;
    const gatewayBooks = {
      gateway_published: sum('banstream_edge_events_published_total'),
      gateway_delivered: sum('banstream_edge_events_delivered_total'),
      gateway_dropped: sum('banstream_edge_events_dropped_total'),
      gateway_buffered: sum('banstream_edge_buffer_events'),
    };
    if (lost > 0) {
      const byIp = new Map<string, number>();
      for (const id of lostIds) byIp.set(acknowledged.get(id)!.ip, (byIp.get(acknowledged.get(id)!.ip) ?? 0) + 1);
      const times = lostIds.map((id) => Math.round(acknowledged.get(id)!.at - killedAt));
      note(
        `LOST ${lost} acknowledged events: by address ${JSON.stringify(Object.fromEntries(byIp))}; answered 202 at ${Math.min(...times)}..${Math.max(...times)} ms from the kill; gateway ${JSON.stringify(gatewayBooks)}`,
      );
      for (const line of gatewayMetrics.split('\n').filter((l) => l.startsWith('banstream_edge_events_dropped_total'))) note(line);
    }
    note(`topics read (${elapsed()})`);

    const calmP99 = percentile(calm, 99);
    const failoverP99 = percentile(failover, 99);
    report(
      'failover',
      {
        brokers: 3,
        dedicated_controllers: settings.kafkaControllers.length,
        replication_factor: 3,
        min_insync_replicas: 2,
        partitions: PARTITIONS,
        enforcers: enforcers.length,
        ban_threshold: THRESHOLD,
        floods_without_failure: calm.length,
        floods_during_failover: failover.length,
        flood_gap_ms: FLOOD_GAP_MS,
        broker_down_ms: DOWN_MS,
        background: `${BACKGROUND_POSTERS} clients posting ${BACKGROUND_BATCH} events every 200 ms through the gateway`,
        measure: 'from just before the post carrying the crossing event to the last enforcer denying the address (POST /v1/check polled every 10 ms)',
        ceiling: 'the same floods, one after another, before the failure, in the same run',
        kafka_write:
          'a write with acks=all started at the kill, to a partition of its own led by the killed broker (3 replicas, min.insync.replicas 2), by a client made as the services make theirs: its acknowledgement is the floor of any ban during the failover',
        services_not_ready_at_some_point: [...unreadyServices].join(',') || 'none',
        timings:
          "event_written and ban_written: from the flood's post to the CreateTime of its first record on the events topic (set by the gateway's producer) and of its ban on the bans topic (the aggregator's); denied_after_ban: from that CreateTime to the last enforcer denying the address; p99 over the same floods",
      },
      {
        events_acknowledged: acknowledged.size,
        events_lost: lost,
        ...gatewayBooks,
        posts_refused: refusedPosts,
        propagation_p50_ms_during_failover: sig(median(failover), 3),
        propagation_p99_ms_during_failover: sig(failoverP99, 3),
        propagation_max_ms_during_failover: sig(Math.max(...failover), 3),
        propagation_p50_ms: sig(median(calm), 3),
        propagation_p99_ms: sig(calmP99, 3),
        ratio_p99_failover_to_ceiling: sig(failoverP99 / calmP99, 3),
        kafka_write_after_kill_ms: sig(kafkaWriteMs, 3),
        ratio_p99_failover_to_kafka_write: sig(failoverP99 / kafkaWriteMs, 3),
        propagation_p99_ms_past_kafka_write: sig(failoverP99 - kafkaWriteMs, 3),
        event_written_p99_ms: sig(calmSplit.written, 3),
        ban_written_p99_ms: sig(calmSplit.decided, 3),
        event_written_p99_ms_during_failover: sig(failoverSplit.written, 3),
        ban_written_p99_ms_during_failover: sig(failoverSplit.decided, 3),
        denied_after_ban_p99_ms: sig(calmSplit.applied, 3),
        denied_after_ban_p99_ms_during_failover: sig(failoverSplit.applied, 3),
        leaders_moved_s: sig(leadersMovedMs / 1000, 3),
        recovery_s: sig(recoveryMs / 1000, 3),
        isr_restored_s_after_restart: sig(isrMs / 1000, 3),
      },
    );
    await admin.disconnect();
  } finally {
    posting = false;
    // Services first, while Kafka is still there to shut down against; a straggler is killed.
    await Promise.all(
      children.map(async (c) => {
        if (c.exitCode !== null || c.signalCode !== null) return;
        const exited = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        if ((await Promise.race([exited, sleep(10_000).then(() => 'late')])) === 'late') c.kill('SIGKILL');
      }),
    );
    await stackDown(settings);
    note(`stopped (${elapsed()})`);
    // With the services' output, the brokers' and controllers' logs (what Kafka did at the kill).
    if (logDir) cpSync(settings.logs, `${logDir}/kafka`, { recursive: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
