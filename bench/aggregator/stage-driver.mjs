// Development only: feeds a fixed set of events records (shaped like events.ts) through one
// EventsStage of a built worktree (`root`), in process, no Kafka: its private record path
// (guarded() or, before the record guard, record()), so CPU per event of two builds can be
// compared (stage-ab.mjs). Usage: node bench/aggregator/stage-driver.mjs <root> <rounds> [events]
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

export async function loadBuild(root) {
  const imp = (p) => import(pathToFileURL(`${root}/${p}`).href);
  const isMain = existsSync(`${root}/packages/engine/dist/index.js`);
  const core = await imp('packages/core/dist/index.js');
  const platform = await imp('packages/platform/dist/index.js');
  const schemas = await imp('schemas/dist/index.js');
  const eng = isMain
    ? await imp('packages/engine/dist/index.js')
    : {
        Outbox: (await imp('services/aggregator/dist/engine/outbox.js')).Outbox,
        BanLedger: (await imp('services/aggregator/dist/engine/ban-ledger.js')).BanLedger,
        PartitionState: (await imp('services/aggregator/dist/engine/partition-state.js')).PartitionState,
        RepartitionBuffer: (await imp('services/aggregator/dist/engine/repartition.js')).RepartitionBuffer,
        checkEvent: (await imp('services/aggregator/dist/engine/event-check.js')).checkEvent,
      };
  const { EventsStage } = await imp('services/aggregator/dist/stages/events-stage.js');
  const { aggregatorMetrics } = await imp('services/aggregator/dist/metrics.js');
  const { Registry } = createRequire(`${root}/package.json`)('prom-client');
  const PolicyBook = core.PolicyBook ?? platform.PolicyBook;
  const catalog = schemas.loadSchemaCatalog();
  const book = new PolicyBook((p) => p.enforcement.type === 'async');
  const policyCodec = catalog.codec(schemas.SCHEMA_NAMES.policy);
  for (const spec of POLICIES) {
    const rec = {
      id: spec.id,
      version: 1,
      description: spec.description,
      owner: 'bench',
      mode: 'enforce',
      enabled: true,
      definition: JSON.stringify({ ...spec, mode: 'enforce' }),
      updatedBy: 'bench',
      updatedAt: Date.now(),
    };
    const change = book.apply(spec.id, policyCodec.decode(policyCodec.encode(rec)));
    if (change.kind === 'rejected') throw new Error(JSON.stringify(change));
  }
  const config = {
    AGGREGATOR_GROUP_ID: 'g',
    AGGREGATOR_SESSION_TIMEOUT_MS: 30000,
    AGGREGATOR_FETCH_KB_PER_PARTITION: 1024,
    AGGREGATOR_GRACE_MS: 5000,
    AGGREGATOR_HOT_SHARE: 0.5,
    AGGREGATOR_COUNT_INTERVAL_MS: 1000,
    AGGREGATOR_MAX_FUTURE_MS: 5000,
    AGGREGATOR_RECORD_BUDGET_MS: 10000,
  };
  const consumer = { on() {}, events: { GROUP_JOIN: 'j', CRASH: 'c' } };
  const logger = {
    info() {},
    warn() {},
    error() {},
    debug() {},
    child() {
      return logger;
    },
  };
  const outbox = new eng.Outbox();
  const ctx = {
    kafka: { consumer: () => consumer },
    admin: {},
    logger,
    config,
    catalog,
    topics: { events: 'events', subjects: 'subjects', dlq: 'dlq' },
    partitions: { events: 12, subjects: 12 },
    metrics: aggregatorMetrics(new Registry()),
    book,
    outbox,
    decider: { ledger: new eng.BanLedger(), allowlist: new core.Allowlist(), nowMs: Date.now },
    horizonMs: () => 700000,
    flushDecisions: async () => {},
    publishUntilDone: async () => {},
    watch: (t) => platform.unwatched(t, 10000),
    reloadTraps() {},
  };
  const stage = new EventsStage(ctx);
  const batchCodec = catalog.codec(schemas.SCHEMA_NAMES.requestEventBatch);
  const newOwner = (p) => ({ counts: new eng.PartitionState(p, { graceMs: 5000, hotShare: 0.5, countIntervalMs: 1000 }), repartition: new eng.RepartitionBuffer(p, 12) });
  const run = (records) => {
    const owners = new Map();
    let n = 0;
    const dead = [];
    let since = 0;
    for (const r of records) {
      let owner = owners.get(r.p);
      if (!owner) owners.set(r.p, (owner = newOwner(r.p)));
      n += isMain ? stage.guarded(owner, true, r.m, r.p, dead) : stage.record(owner, true, r.m, r.p, dead);
      if (++since === 20) {
        since = 0;
        for (const o of owners.values()) o.repartition.take();
      }
      outbox.bans.length = 0;
      outbox.counts.length = 0;
      if (outbox.history) outbox.history.length = 0;
    }
    if (dead.length) throw new Error(`dead letters: ${dead.length} ${JSON.stringify(dead[0].reasonCode ?? dead[0])}`);
    return n;
  };
  return { isMain, stage, run, eng, newOwner, encode: (events) => batchCodec.encode({ events }), ctx };
}

export const POLICIES = [
  { id: 'bench-ip-ban', description: 'ip', key: ['ip'], threshold: { count: 1000, interval: '1m' }, action: { type: 'ban', banDuration: '10m', status: 403 } },
  { id: 'bench-user-throttle', description: 'user', key: ['user'], threshold: { count: 300, interval: '1m' }, action: { type: 'throttle', status: 429 } },
  { id: 'bench-country-alert', description: 'country', key: ['country'], threshold: { count: 200000, interval: '10m' }, action: { type: 'alert' } },
];

/** Events like bench/aggregator/events.ts: /24s of 250 hosts, a few hot IPs, 20% users, 10% logins, grouped 500 per record by /24. */
export function makeRecords(build, total, nowMs) {
  let s = 20250101;
  const rnd = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(rnd() * n);
  const prefixes = Array.from({ length: 800 }, (_, i) => `${11 + (i % 200)}.${int(256)}.${int(256)}`);
  const countries = ['US', 'DE', 'FR', 'GB', 'BR', 'IN', 'JP', 'CN', 'CA', 'NL'];
  const agents = ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/126.0', 'curl/8.5.0', 'python-requests/2.32.3'];
  const hot = Array.from({ length: Number(process.env.HOT_IPS ?? 4) }, () => [int(prefixes.length), 1 + int(250)]);
  const span = Number(process.env.SPAN_MS ?? 10000);
  const start = nowMs - span - 1000;
  const perPrefix = prefixes.map(() => []);
  for (let i = 0; i < total; i++) {
    const [p, h] = rnd() < Number(process.env.HOT_SHARE ?? 0.02) ? hot[int(hot.length)] : [int(prefixes.length), 1 + int(250)];
    const login = rnd() < 0.1;
    const fail = login && rnd() < 0.7;
    const user = rnd() < 0.2 ? `u${int(40000)}` : null;
    const ts = start + Math.floor((i * span) / total);
    perPrefix[p].push({
      eventId: `e${i}`,
      timestamp: ts,
      ip: `${prefixes[p]}.${h}`,
      country: countries[p % countries.length],
      region: null,
      asn: 1000 + p,
      method: login ? 'POST' : 'GET',
      host: 'shop.example.com',
      path: login ? '/login' : '/',
      route: login ? '/login' : '/',
      status: fail ? 401 : 200,
      userId: user,
      apiKeyHash: null,
      headers: { 'user-agent': agents[int(agents.length)] },
      edgeId: 'edge-a1',
      latencyMs: 1.5,
    });
  }
  const batches = [];
  perPrefix.forEach((events, p) => {
    for (let i = 0; i < events.length; i += 500) batches.push({ p, events: events.slice(i, i + 500) });
  });
  batches.sort((a, b) => a.events[0].timestamp - b.events[0].timestamp);
  return batches.map((b, i) => ({
    p: b.p % 12,
    m: { offset: String(i), key: Buffer.from(prefixes[b.p]), value: build.encode(b.events), timestamp: String(b.events[b.events.length - 1].timestamp + 500), headers: {} },
  }));
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [root, rounds = '10', total = '300000'] = process.argv.slice(2);
  const build = await loadBuild(root);
  const records = makeRecords(build, Number(total), Date.now());
  let n = 0;
  const t0 = process.cpuUsage();
  for (let r = 0; r < Number(rounds); r++) n += build.run(records);
  const cpu = process.cpuUsage(t0);
  console.log(JSON.stringify({ root, main: build.isMain, events: n, cpu_us_per_event: (cpu.user + cpu.system) / n }));
}
