/**
 * npm run bench -- ban-latency
 *
 * How soon a ban is published after the event that crosses a ban threshold reaches
 * Kafka: an aggregator runs against topics of its own; attackers send, one after
 * another, a record whose events cross a per-IP ban threshold; a consumer tailing
 * the bans topic notes when each ban arrives. The ceiling, measured in the same run
 * with the same client settings, is a bare produce-then-consume round trip through
 * the broker: the part of the delay no aggregator can remove.
 */
import { spawn } from 'node:child_process';
import { ensureTopics, parseBrokers, topicFullName, topicSpecs, type Consumer } from '@banstream/kafka';
import { eventPartitionKey } from '@banstream/core';
import { loadSchemaCatalog, requestEvent, SCHEMA_NAMES, type RequestEvent } from '@banstream/schemas';
import { median, note, percentile, report, sig } from './lib.js';
import { benchKafka, publishPolicies } from './aggregator/kafka.js';
import { freePort, serviceNodeArgs, waitReady } from './aggregator/service.js';

/** Attacker a is 198.18.(a mod 256).(9 + a div 256): the first 256 are the addresses earlier runs used, hence the same partitions. */
const MAX_ATTACKERS = 10_000;
/** BENCH_ATTACKERS: more bans give a steadier median (a run of 60 takes about 10 s of sends). */
const ATTACKERS = attackerCount(process.env.BENCH_ATTACKERS ?? '60');
const THRESHOLD = 50;
const GAP_MS = 150;
const BROKERS = process.env.KAFKA_BROKERS ?? '127.0.0.1:19092';
/** BENCH_CPU_PROFILE_DIR: the aggregator's processes write V8 CPU profiles there when stopped (node --cpu-prof, 100 µs sampling). */
const PROFILE_DIR = process.env.BENCH_CPU_PROFILE_DIR;
const attackerIp = (a: number): string => `198.18.${a & 255}.${9 + (a >> 8)}`;

function attackerCount(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > MAX_ATTACKERS) throw new Error(`BENCH_ATTACKERS must be a whole number from 1 to ${MAX_ATTACKERS}, got ${JSON.stringify(text)}`);
  return n;
}

async function tail(consumer: Consumer, topic: string, onKey: (key: string) => void): Promise<void> {
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => onKey(message.key?.toString() ?? '') });
}

async function main(): Promise<void> {
  const runId = `${Date.now()}-${process.pid}`;
  const prefix = `bench-banlat-${runId}.`;
  const kafka = benchKafka(parseBrokers(BROKERS), `bench-ban-latency-${runId}`);
  const admin = kafka.admin();
  await admin.connect();
  const catalog = loadSchemaCatalog();
  await ensureTopics(admin, topicSpecs({ prefix, partitions: 6, replicationFactor: 1 }));
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  await publishPolicies(kafka, prefix, catalog, [{ id: 'flood', key: ['ip'], threshold: { count: THRESHOLD, interval: '1m' }, action: { type: 'ban', banDuration: '10m' } }]);
  const port = await freePort();
  // Its workers take the supervisor's node flags, so each process writes its own profile.
  const profiling = PROFILE_DIR === undefined ? [] : ['--cpu-prof', '--cpu-prof-interval', '100', '--cpu-prof-dir', PROFILE_DIR];
  const child = spawn(process.execPath, [...profiling, ...serviceNodeArgs('aggregator')], {
    env: { PATH: process.env.PATH ?? '', KAFKA_BROKERS: BROKERS, TOPIC_PREFIX: prefix, TOPIC_PARTITIONS: '6', HTTP_PORT: String(port), LOG_LEVEL: 'warn', AGGREGATOR_GROUP_ID: `${prefix}aggregator` },
    // Its log stays out of stdout: the result must be the last line printed.
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const consumers: Consumer[] = [];
  try {
    await waitReady(`http://127.0.0.1:${port}/readyz`);
    const arrived = new Map<string, number>();
    const bans = kafka.consumer({ groupId: `${prefix}tail`, maxWaitTimeInMs: 10 });
    consumers.push(bans);
    await tail(bans, topicFullName(prefix, 'bans'), (key) => arrived.set(key, performance.now()));
    const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
    const sent = new Map<string, number>();
    note(`${ATTACKERS} attackers, ${GAP_MS} ms apart`);
    for (let a = 0; a < ATTACKERS; a++) {
      const ip = attackerIp(a);
      const events: RequestEvent[] = Array.from({ length: THRESHOLD + 1 }, (_, i) => requestEvent({ eventId: `${a}-${i}`, timestamp: Date.now(), ip, edgeId: 'bench' }));
      sent.set(`ip:${ip}`, performance.now());
      await producer.send({ topic: topicFullName(prefix, 'events'), acks: -1, messages: [{ key: eventPartitionKey(ip), value: codec.encode({ events }) }] });
      await new Promise((r) => setTimeout(r, GAP_MS));
    }
    const deadline = performance.now() + 10_000;
    while (arrived.size < ATTACKERS && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const delays = [...sent].filter(([k]) => arrived.has(k)).map(([k, t]) => arrived.get(k)! - t);

    // Ceiling: the same produce and the same tailing consumer, without an aggregator in between.
    const echoTopic = topicFullName(prefix, 'alerts');
    const echoed = new Map<string, number>();
    const echo = kafka.consumer({ groupId: `${prefix}echo`, maxWaitTimeInMs: 10 });
    consumers.push(echo);
    await tail(echo, echoTopic, (key) => echoed.set(key, performance.now()));
    const echoSent = new Map<string, number>();
    for (let a = 0; a < ATTACKERS; a++) {
      echoSent.set(`k${a}`, performance.now());
      await producer.send({ topic: echoTopic, acks: -1, messages: [{ key: `k${a}`, value: Buffer.alloc(200) }] });
      await new Promise((r) => setTimeout(r, GAP_MS));
    }
    while (echoed.size < ATTACKERS && performance.now() < deadline + 20_000) await new Promise((r) => setTimeout(r, 50));
    const roundTrips = [...echoSent].filter(([k]) => echoed.has(k)).map(([k, t]) => echoed.get(k)! - t);
    report(
      'ban-latency',
      {
        attackers: ATTACKERS,
        ban_threshold: THRESHOLD,
        gap_ms: GAP_MS,
        partitions: 6,
        measure: 'from just before sending the record whose events cross the threshold to the ban arriving at a consumer of the bans topic (maxWaitTimeInMs 10)',
        ceiling: 'produce (acks -1) then consume of a bare record, same producer and consumer settings',
      },
      {
        bans_seen: delays.length,
        ban_delay_p50_ms: sig(median(delays), 3),
        ban_delay_p99_ms: sig(percentile(delays, 99), 3),
        ceiling_roundtrip_p50_ms: sig(median(roundTrips), 3),
        ceiling_roundtrip_p99_ms: sig(percentile(roundTrips, 99), 3),
        ratio_p50: sig(median(roundTrips) / median(delays), 3),
      },
    );
  } finally {
    child.kill('SIGTERM');
    for (const c of consumers) await c.disconnect();
    await producer.disconnect();
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    await admin.deleteTopics({ topics }).catch(() => undefined);
    await admin.disconnect();
  }
}

await main();
