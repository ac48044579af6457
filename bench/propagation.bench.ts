/**
 * npm run bench -- propagation
 *
 * Under a steady background load (BENCH_PROPAGATION_RATE events/s, default 100,000,
 * through the events topic and the aggregator), attackers send one record each whose
 * events cross a per-IP ban threshold. Measured per attacker: from just before that
 * record is sent to the ban being applied in every enforcer's cache (two sidecars,
 * each polled with POST /v1/check until it denies). Ceiling, in the same run: a bare
 * produce-then-consume round trip through the broker. Anchors: CrowdSec bouncers poll
 * every 10 s by default; Cloudflare documents "up to a few seconds"; AWS WAF "usually
 * below 30 seconds".
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { eventPartitionKey } from '@banstream/core';
import { ensureTopics, parseBrokers, topicFullName, topicSpecs } from '@banstream/kafka';
import { loadSchemaCatalog, requestEvent, SCHEMA_NAMES, type RequestEvent } from '@banstream/schemas';
import { median, note, percentile, report, sig } from './lib.js';
import { benchKafka, publishPolicies } from './aggregator/kafka.js';
import { freePort, serviceNodeArgs, waitReady } from './aggregator/service.js';

const RATE = Number(process.env.BENCH_PROPAGATION_RATE ?? 100_000);
const ATTACKERS = 100; // enough for p99 to be a percentile rather than the maximum
const THRESHOLD = 50;
const GAP_MS = 400;
const BROKERS = process.env.KAFKA_BROKERS ?? '127.0.0.1:19092';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:16379';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function event(ip: string, timestamp: number): RequestEvent {
  return requestEvent({ eventId: '', timestamp, ip, country: 'FR', edgeId: 'bench' });
}

async function denied(port: number, ip: string): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/check`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ip, method: 'GET', host: 'shop.example', path: '/' }),
  });
  return ((await res.json()) as { allowed: boolean }).allowed === false;
}

async function main(): Promise<void> {
  const prefix = `bench-prop-${Date.now()}-${process.pid}.`;
  const kafka = benchKafka(parseBrokers(BROKERS), `bench-propagation-${process.pid}`);
  const admin = kafka.admin();
  await admin.connect();
  const catalog = loadSchemaCatalog();
  const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
  await ensureTopics(admin, topicSpecs({ prefix, partitions: 6, replicationFactor: 1 }));
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  await publishPolicies(kafka, prefix, catalog, [{ id: 'flood', key: ['ip'], threshold: { count: THRESHOLD, interval: '1m' }, action: { type: 'ban', banDuration: '10m' } }]);
  const env = { PATH: process.env.PATH ?? '', KAFKA_BROKERS: BROKERS, REDIS_URL, TOPIC_PREFIX: prefix, TOPIC_PARTITIONS: '6', LOG_LEVEL: 'error' };
  const children: ChildProcess[] = [];
  const start = async (service: string, extra: Record<string, string>) => {
    const port = await freePort();
    children.push(spawn(process.execPath, serviceNodeArgs(service), { env: { ...env, ...extra, HTTP_PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] }));
    await waitReady(`http://127.0.0.1:${port}/readyz`);
    return port;
  };
  let loading = true;
  let sent = 0;
  try {
    await start('aggregator', { AGGREGATOR_GROUP_ID: `${prefix}aggregator` });
    const enforcers = [await start('enforcer', {}), await start('enforcer', {})];

    // Background: RATE events/s from 20,000 clients that never come near the threshold.
    const background = (async () => {
      const began = performance.now();
      for (let tick = 0; loading; tick++) {
        const due = began + tick * 100;
        if (due > performance.now()) await sleep(due - performance.now());
        const now = Date.now();
        const perTick = RATE / 10;
        const messages: { key: string; value: Buffer }[] = [];
        for (let r = 0; r < perTick / 500; r++) {
          const net = (tick * 7 + r) % 80;
          const events = Array.from({ length: 500 }, (_, i) => event(`10.${net}.${(tick + i) % 250}.${i % 250}`, now));
          messages.push({ key: eventPartitionKey(events[0]!.ip), value: codec.encode({ events }) });
        }
        await producer.send({ topic: topicFullName(prefix, 'events'), acks: -1, messages });
        sent += perTick;
      }
      return performance.now() - began;
    })();
    await sleep(5_000); // the load reaches a steady state before anything is measured

    note(`${ATTACKERS} attackers, ${GAP_MS} ms apart, under ${RATE} events/s`);
    const delays: number[] = [];
    for (let a = 0; a < ATTACKERS; a++) {
      const ip = `198.18.${a}.7`;
      const at = performance.now();
      await producer.send({
        topic: topicFullName(prefix, 'events'),
        acks: -1,
        messages: [{ key: eventPartitionKey(ip), value: codec.encode({ events: Array.from({ length: THRESHOLD + 1 }, () => event(ip, Date.now())) }) }],
      });
      const pending = new Set(enforcers);
      while (pending.size > 0) {
        if (performance.now() - at > 30_000) throw new Error(`attacker ${ip} not banned everywhere within 30 s`);
        for (const port of [...pending]) if (await denied(port, ip)) pending.delete(port);
        if (pending.size > 0) await sleep(5);
      }
      delays.push(performance.now() - at);
      await sleep(GAP_MS);
    }
    loading = false;
    const loadMs = await background;

    // Ceiling: a bare record produced and consumed with the same clients, no services in between.
    const echoTopic = topicFullName(prefix, 'alerts');
    const arrived = new Map<string, number>();
    const echo = kafka.consumer({ groupId: `${prefix}echo`, maxWaitTimeInMs: 10 });
    await echo.connect();
    await echo.subscribe({ topic: echoTopic, fromBeginning: true });
    await echo.run({ eachMessage: async ({ message }) => void arrived.set(message.key?.toString() ?? '', performance.now()) });
    const roundTrips: number[] = [];
    for (let i = 0; i < ATTACKERS; i++) {
      const t = performance.now();
      await producer.send({ topic: echoTopic, acks: -1, messages: [{ key: `k${i}`, value: Buffer.alloc(200) }] });
      while (!arrived.has(`k${i}`) && performance.now() - t < 10_000) await sleep(1);
      if (arrived.has(`k${i}`)) roundTrips.push(arrived.get(`k${i}`)! - t);
    }
    await echo.disconnect();
    report(
      'propagation',
      {
        enforcers: enforcers.length,
        attackers: ATTACKERS,
        ban_threshold: THRESHOLD,
        gap_ms: GAP_MS,
        partitions: 6,
        target_background_events_per_s: RATE,
        measure: 'from just before sending the record that crosses the threshold to the last of the enforcers denying the address (POST /v1/check polled every 5 ms)',
        ceiling: 'produce (acks -1) then consume of a bare record, same clients, no services in between',
      },
      {
        p50_ms: sig(median(delays), 3),
        p99_ms: sig(percentile(delays, 99), 3),
        max_ms: sig(Math.max(...delays), 3),
        background_events_per_s: Math.round((sent / loadMs) * 1000),
        ceiling_roundtrip_p50_ms: sig(median(roundTrips), 3),
        ceiling_roundtrip_p99_ms: sig(percentile(roundTrips, 99), 3),
      },
    );
  } finally {
    loading = false;
    for (const c of children) c.kill('SIGTERM');
    await producer.disconnect();
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    await admin.deleteTopics({ topics }).catch(() => undefined);
    await admin.disconnect();
  }
}

await main();
