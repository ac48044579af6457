/**
 * `npm run demo`: drives the demo's traffic through two real edges into a pipeline
 * started by `npm start`, and shows live what happens (display.ts). Connects with
 * KAFKA_BROKERS and TOPIC_PREFIX (defaults as `npm start`), the control API at
 * BANSTREAM_URL with BANSTREAM_TOKEN / BANSTREAM_TOKEN_FILE or npm start's local admin
 * token, the aggregator's metrics at BANSTREAM_AGGREGATOR_URL. Logs go to DEMO_LOG
 * (default .stack/logs/demo.log). Ctrl-C stops.
 */
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createKafka, installKafkaPatches, parseBrokers, topicFullName, type Consumer, type Kafka } from '@banstream/kafka';
import { createLogger } from '@banstream/platform';
import { loadSchemaCatalog, SCHEMA_NAMES } from '@banstream/schemas';
import { stackSettings } from '../scripts/stack/index.mjs';
import { localControlToken } from '../scripts/run/control-token.mjs';
import { startEdge, type Edge } from './edge.js';
import { Driver } from './driver.js';
import { applyDemoPolicies } from './control.js';
import { publishHistory } from './history.js';
import { frame, ratesBetween, render, type AlertRow, type BanRow, type DisplayState } from './display.js';
import { activeAttacks, BOTNET_PREFIX, CLASSES, DEMO_SCENARIO, FLOOD_IP, Scenario, type Attacker, type TrafficClass } from './scenario.js';

const env = process.env;
const settings = stackSettings();
const brokers = env.KAFKA_BROKERS ?? settings.kafkaBrokers;
const prefix = env.TOPIC_PREFIX ?? 'banstream.';
const controlUrl = env.BANSTREAM_URL ?? `http://127.0.0.1:${env.BANSTREAM_CONTROL_PORT ?? 8083}`;
const aggregatorUrl = env.BANSTREAM_AGGREGATOR_URL ?? `http://127.0.0.1:${env.BANSTREAM_AGGREGATOR_PORT ?? 8081}`;
const logFile = env.DEMO_LOG ?? join(settings.logs, 'demo.log');
const catalog = loadSchemaCatalog();
const out = process.stdout;
const ATTACKER_OF: Record<string, Attacker> = { [`ip:${FLOOD_IP}`]: 'flood', [`cidr:${BOTNET_PREFIX}`]: 'botnet' };

function token(): string {
  if (env.BANSTREAM_TOKEN) return env.BANSTREAM_TOKEN.trim();
  return readFileSync(env.BANSTREAM_TOKEN_FILE ?? localControlToken(settings.dir).tokenFile, 'utf8').trim();
}

/** Reads a topic from the beginning in a group of its own, handing each record over. */
async function tail(kafka: Kafka, topic: string, each: (key: string, value: Buffer | null) => void): Promise<Consumer> {
  const consumer = kafka.consumer({ groupId: `demo-${process.pid}-${Date.now()}-${topic}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => each(message.key?.toString() ?? '', message.value) });
  return consumer;
}

async function aggregatorLag(): Promise<number | undefined> {
  try {
    const text = await (await fetch(`${aggregatorUrl}/metrics`)).text();
    return text
      .split('\n')
      .filter((l) => l.startsWith('banstream_aggregator_consumer_lag{'))
      .reduce((s, l) => s + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  installKafkaPatches(); // before the first client, as a service's main.ts does
  mkdirSync(dirname(logFile), { recursive: true });
  const logger = createLogger({ service: 'demo', level: 'info', destination: createWriteStream(logFile, { flags: 'a' }) });
  const say = (line: string) => out.write(`${line}\n`);
  say(`banstream demo: Kafka ${brokers}, topics ${prefix}*, control ${controlUrl}; logs in ${logFile}`);
  const kafka = createKafka({ brokers: parseBrokers(brokers), clientId: 'banstream-demo', logger });
  const admin = kafka.admin();
  await admin.connect();
  const eventsTopic = topicFullName(prefix, 'events');
  const [meta] = (await admin.fetchTopicMetadata({ topics: [eventsTopic] })).topics;
  const options = { ...DEMO_SCENARIO, partitions: meta!.partitions.length };
  await applyDemoPolicies(controlUrl, token());
  say('policies applied: demo-flood (per IP), demo-login-stuffing (failed logins per /24)');

  // Past traffic of the same users, once per topic prefix (then only the gap since the last run), so the geographic baselines are learned.
  const marker = join(settings.dir, `demo-history-${prefix.replace(/[^\w.-]/g, '_')}json`);
  const now = Date.now();
  const last = existsSync(marker) ? (JSON.parse(readFileSync(marker, 'utf8')) as { until: number }).until : undefined;
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  if (last === undefined || now - last > 6 * 3_600_000) {
    const n = await publishHistory(producer, eventsTopic, options, now, 2, (share) => out.write(`\rseeding history: ${Math.round(share * 100)}%`));
    say(`\rseeding history: ${n} events`);
  } else if (now > last) {
    const n = await publishHistory(producer, eventsTopic, options, now, 0, undefined, last);
    say(`history since the last run: ${n} events`);
  }
  await producer.disconnect();
  writeFileSync(marker, JSON.stringify({ until: now }));
  for (let i = 0; i < 240; i++) {
    const lag = await aggregatorLag();
    if (lag === 0) break;
    out.write(`\rwaiting for the aggregator to catch up: ${lag ?? 'no answer from'} ${lag === undefined ? aggregatorUrl : 'records behind'}   `);
    await new Promise((r) => setTimeout(r, 500));
  }

  const edges: Edge[] = await Promise.all(['edge-a', 'edge-b'].map((edgeId) => startEdge({ brokers, topicPrefix: prefix, edgeId, logger })));
  while (!edges.every((e) => e.enforcer.ready)) await new Promise((r) => setTimeout(r, 50));
  const bans = new Map<string, BanRow>();
  const alerts: AlertRow[] = [];
  const banCodec = catalog.codec(SCHEMA_NAMES.ban);
  const alertCodec = catalog.codec(SCHEMA_NAMES.geoAlert);
  const consumers = [
    await tail(kafka, topicFullName(prefix, 'bans'), (key, value) => {
      if (value === null) return void bans.delete(key);
      const ban = banCodec.decode(value);
      if (!ban.preview) bans.set(key, { subject: ban.subject, policyId: ban.policyId, since: ban.startedAt, expiresAt: ban.expiresAt });
    }),
    await tail(kafka, topicFullName(prefix, 'alerts'), (_key, value) => {
      if (value === null) return;
      const a = alertCodec.decode(value);
      alerts.push({ code: a.code, state: a.state, at: a.at, currentRate: a.currentRate, baselineRate: a.baselineRate, ratio: a.ratio });
      if (alerts.length > 20) alerts.shift();
    }),
  ];

  const scenario = new Scenario(options, Date.now());
  const driver = new Driver({ edges: edges.map((e) => e.url), scenario }).start();
  const snapshots: { at: number; counts: Record<TrafficClass, { allowed: number; denied: number }> }[] = [];
  const snapshot = () => Object.fromEntries(CLASSES.map((c) => [c, { ...driver.stats[c] }])) as unknown as Record<TrafficClass, { allowed: number; denied: number }>;
  out.write('\x1b[2J\x1b[?25l');
  const draw = () => {
    const at = Date.now();
    snapshots.push({ at, counts: snapshot() });
    while (snapshots.length > 1 && at - snapshots[0]!.at > 3_000) snapshots.shift();
    const first = snapshots[0]!;
    const state: DisplayState = {
      now: at,
      startedAt: scenario.startedAt,
      target: `2 edges -> ${prefix}events; control ${controlUrl}`,
      attacks: [...activeAttacks(options.phases, at - scenario.startedAt)],
      rates: ratesBetween(first.counts, snapshots.at(-1)!.counts, at - first.at),
      bans: [...bans.values()]
        .filter((b) => b.expiresAt > at)
        .map((b) => {
          const attacker = ATTACKER_OF[b.subject];
          const episode = attacker ? driver.attacks[attacker] : undefined;
          // The delay belongs to this ban only when the ban came during the attack's current episode.
          const ms = attacker && episode && b.since >= episode.startedAt - 1_000 ? driver.propagationMs(attacker) : undefined;
          return { ...b, afterAttackMs: ms, afterCrossingMs: ms === undefined ? undefined : episode!.startedAt + ms - b.since };
        }),
      alerts: [...alerts],
      status: `legitimate requests refused: ${driver.stats.legit.denied}   (Ctrl-C stops; logs: ${logFile})`,
    };
    out.write(frame(render(state, out.columns ?? 120)));
  };
  const timer = setInterval(draw, 250);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    clearInterval(timer);
    out.write('\x1b[?25h\nstopping ...\n');
    // Whatever hangs, the terminal is given back.
    setTimeout(() => process.exit(1), 20_000).unref();
    await driver.stop();
    out.write(`sent ${CLASSES.map((c) => `${c} ${driver.stats[c].sent}`).join(', ')}\n`);
    writeFileSync(marker, JSON.stringify({ until: Date.now() }));
    // Edges send what they buffered; consumers leave their groups: in parallel, each step logged.
    const step = async (name: string, work: Promise<unknown>) => {
      await work.catch((error: unknown) => logger.warn({ err: error }, `${name}: stop failed`));
      logger.info(`${name}: stopped`);
    };
    await Promise.all([...edges.map((e) => step(e.edgeId, e.close())), ...consumers.map((c, i) => step(`consumer ${i}`, c.disconnect())), step('admin', admin.disconnect())]);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((error: unknown) => {
  out.write(`\x1b[?25h\ndemo failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
