// The capacity plan as pure computation: measured figures and stated assumptions in,
// numbers out, each number with what it was computed from. scripts/capacity.mjs reads
// the figures (bench/results/*.json, else docs/performance.md) and prints the plan;
// scripts/reference.mjs writes the plan for the default target into
// docs/operations/capacity.md. Nothing here reads files or the clock.

/** The target the docs are written for; every one is a flag of `npm run capacity`. */
export const DEFAULT_TARGET = Object.freeze({
  /** Events per second, all regions together. */
  events: 1_000_000,
  /** Live bans an enforcer may have to hold (sized as if all of them were in one region). */
  bans: 10_000_000,
  regions: 3,
  /** Share of every resource kept spare: 0.5 runs each part at half of what it was measured to do. */
  headroom: 0.5,
});

/** Stated assumptions, each with where it comes from; every one is a flag. */
export const DEFAULT_ASSUMPTIONS = Object.freeze({
  brokerMbPerS: {
    value: 100,
    flag: '--broker-mb',
    unit: 'MB/s written per broker (produce + replication)',
    source:
      'assumption: "ideally a single Kafka broker supports up to 100 MB/s" (Alibaba Cloud, ApsaraMQ for Confluent, suggestions for estimating cluster resources); not measured here: the local stack has one broker on a shared 2-core machine',
  },
  replicationFactor: { value: 3, flag: '--rf', unit: 'replicas', source: 'issue 27: replication factor 3, min.insync.replicas 2' },
  coresPerProcess: { value: 2, flag: '--cores-per-process', unit: 'cores', source: 'as measured: the aggregator bench runs AGGREGATOR_WORKERS = cores = 2' },
  windowKeys: {
    value: 10_000_000,
    flag: '--keys',
    unit: 'tracked window keys per region',
    source: 'assumption: as many counted subjects (all policies) per region as live bans in all; set it from `banstream_aggregator_state_keys` summed over the aggregators of a region',
  },
  gatewayShare: {
    value: 1,
    flag: '--gateway-share',
    unit: 'of the events',
    source: 'assumption, the worst case: every event comes through the ingest gateway (the soak sends 10%, the rest from edge publishers)',
  },
  rttMs: {
    value: 200,
    flag: '--rtt-ms',
    unit: 'ms round trip between the farthest two regions',
    source: 'assumption: regions on three continents; public inter-region latency tables give 150 to 250 ms between Europe, US East and Asia-Pacific',
  },
  lingerMs: { value: 5, flag: '--linger-ms', unit: 'ms', source: "MirrorMaker 2's producer: Kafka 4's default linger.ms (KIP-1030)" },
});

/** The figures the plan reads: benchmark, figure name in its results, what it is. */
export const FIGURES = Object.freeze({
  aggregatorCpuUsPerEvent: { bench: 'aggregator', figure: 'cpu_us_per_event', unit: 'µs CPU per event (all aggregator processes)' },
  aggregatorEventsPerS: { bench: 'aggregator', figure: 'events_per_s', unit: 'events/s with AGGREGATOR_WORKERS = cores' },
  aggregatorWorkers: { bench: 'aggregator', figure: 'aggregator_workers', unit: 'AGGREGATOR_WORKERS in that run' },
  eventBytes: { bench: 'aggregator', figure: 'avg_event_bytes', unit: 'bytes per event on the events topic (Avro batches, uncompressed)' },
  ingestAvroCpuUsPerEvent: { bench: 'ingest', figure: 'avro_cpu_us_per_event', unit: 'µs gateway CPU per event, Avro batches of 500' },
  ingestJsonCpuUsPerEvent: { bench: 'ingest', figure: 'json_cpu_us_per_event', unit: 'µs gateway CPU per event, JSON batches of 500' },
  localChecksPerS: { bench: 'enforcer', figure: 'local_checks_per_s', unit: 'in-process checks/s on one core, 1M bans' },
  httpChecksPerS: { bench: 'enforcer', figure: 'http_checks_per_s', unit: 'sidecar checks/s (one process)' },
  banBytes: { bench: 'enforcer', figure: 'ban_cache_bytes_per_ban', unit: 'heap and array-buffer bytes per ban held (the BanCache, at 1M IPv4 bans)' },
  banFeedLagP99Ms: { bench: 'enforcer', figure: 'ban_feed_lag_p99_ms', unit: 'ms p99, ban record sent to applied by an enforcer' },
  windowBytesPerKey: { bench: 'window', figure: 'bytes_per_key', unit: 'bytes per tracked window key' },
  banDelayP99Ms: { bench: 'ban-latency', figure: 'ban_delay_p99_ms', unit: 'ms p99, crossing record in Kafka to its ban on the bans topic' },
  propagationP99Ms: { bench: 'propagation', figure: 'p99_ms', unit: 'ms p99, crossing record sent to its ban in every enforcer, under 100,000 events/s' },
  roundtripP99Ms: { bench: 'propagation', figure: 'ceiling_roundtrip_p99_ms', unit: 'ms p99, bare produce-and-consume round trip (acks -1) in the same run' },
});

/**
 * Figures no table row carries yet, with their own source. eventBytes is a property of
 * the aggregator bench's seeded trace (not of the machine); banBytes was measured by
 * bench/enforcer/ban-bytes.ts before the enforcer bench reported it.
 */
export const FALLBACK_FIGURES = Object.freeze({
  eventBytes: { value: 162, source: "the aggregator bench's seeded trace (seed 20250101: 2,000,000 events in 4,211 records of 77,173 bytes); docs/performance.md has no row for it" },
  banBytes: {
    value: 49,
    source:
      '`npm run bench -- enforcer` `ban_cache_bytes_per_ban`, 2026-11-26 (49 with the compact ban cache; 439 with a Ban object per ban, 502 before the IPv4 table moved to typed arrays), Node v20.20.2: 1M bans decoded from Avro',
  },
});

/**
 * ENFORCER_MAX_BANS (services/enforcer/src/cache/ban-cache.ts): its default, and its
 * ceiling, below V8's 16,777,216 entries per Map (exact subjects are kept in one).
 */
export const ENFORCER_MAX_BANS = Object.freeze({ default: 10_000_000, ceiling: 16_000_000 });
/**
 * The topics with TOPIC_PARTITIONS partitions (events, aggregator-subjects, counts, bans,
 * ban-history, aggregator-baselines) and those with one (policies, allowlist, alerts,
 * audit, dlq, feeds): packages/kafka's topicSpecs, which a test holds this to.
 */
export const TOPICS = Object.freeze({ partitioned: 6, single: 6 });

/** Reads a markdown number: `512,314`, `0.0003`, `1.2e6`; undefined for `–` and text. */
export function parseNumber(text) {
  const t = String(text).trim().replaceAll(',', '').replaceAll('_', '');
  if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t)) return undefined;
  return Number(t);
}

/**
 * The figures of docs/performance.md's "Current figures" table, as
 * { machineCores, rows: Map<"bench figure", number> } (a ceiling column's named figure too).
 */
export function parsePerformanceTable(markdown) {
  const rows = new Map();
  for (const line of markdown.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 6) continue;
    const bench = /^`([^`]+)`$/.exec(cells[1] ?? '')?.[1];
    const figure = /^`([^`]+)`$/.exec(cells[2] ?? '')?.[1];
    if (!bench || !figure) continue;
    const value = parseNumber(cells[3]);
    if (value !== undefined && !rows.has(`${bench} ${figure}`)) rows.set(`${bench} ${figure}`, value);
    const ceiling = /^([\d.,]+) \(`([^`]+)`\)$/.exec(cells[4] ?? '');
    if (ceiling) {
      const v = parseNumber(ceiling[1]);
      if (v !== undefined && !rows.has(`${bench} ${ceiling[2]}`)) rows.set(`${bench} ${ceiling[2]}`, v);
    }
  }
  const cores = /\((\d+) cores\b/.exec(markdown)?.[1];
  return { machineCores: cores === undefined ? undefined : Number(cores), rows };
}

/**
 * The figures from docs/performance.md. CPU per event has no row there: it is bounded
 * from the rate, since the measured processes cannot have used more than the machine's
 * cores (an upper bound, so the plan errs towards more cores).
 */
export function figuresFromTable(markdown) {
  const { machineCores, rows } = parsePerformanceTable(markdown);
  const out = {};
  for (const [name, { bench, figure }] of Object.entries(FIGURES)) {
    const value = rows.get(`${bench} ${figure}`);
    if (value !== undefined) out[name] = { value, source: `docs/performance.md, \`${bench}\` \`${figure}\`` };
  }
  const bound = (name, bench, rateFigure) => {
    const rate = rows.get(`${bench} ${rateFigure}`);
    if (out[name] || rate === undefined || machineCores === undefined) return;
    out[name] = {
      value: round((machineCores * 1e6) / rate, 3),
      source: `docs/performance.md has no CPU row: at most ${machineCores} cores ÷ \`${bench}\` \`${rateFigure}\` ${fmt(rate)}/s (an upper bound)`,
    };
  };
  bound('aggregatorCpuUsPerEvent', 'aggregator', 'events_per_s');
  if (!out.aggregatorWorkers && machineCores !== undefined) out.aggregatorWorkers = { value: machineCores, source: `docs/performance.md: AGGREGATOR_WORKERS = cores (${machineCores})` };
  bound('ingestAvroCpuUsPerEvent', 'ingest', 'avro_events_per_s');
  bound('ingestJsonCpuUsPerEvent', 'ingest', 'json_events_per_s');
  return out;
}

/** The figures from parsed bench/results/NAME.json objects: { [bench]: { machine, figures } }. */
export function figuresFromResults(results) {
  const out = {};
  for (const [name, { bench, figure }] of Object.entries(FIGURES)) {
    const result = results[bench];
    const value = result?.figures?.[figure];
    if (typeof value !== 'number' || !Number.isFinite(value)) continue;
    const machine = result.machine ? ` (${result.machine.cores} cores, ${result.machine.cpu ?? 'cpu not recorded'})` : '';
    out[name] = { value, source: `bench/results/${bench}.json \`${figure}\`${machine}` };
  }
  return out;
}

/** Figures the plan uses when present (a cross-check of the aggregator's cores by its rate). */
const OPTIONAL_FIGURES = ['aggregatorEventsPerS', 'aggregatorWorkers'];

/** Each figure from the first source that has it; throws naming what none has. */
export function mergeFigures(...sources) {
  const out = {};
  for (const name of Object.keys(FIGURES)) {
    const found = sources.find((s) => s?.[name] !== undefined)?.[name];
    if (found) out[name] = found;
  }
  const missing = Object.keys(FIGURES).filter((n) => out[n] === undefined && !OPTIONAL_FIGURES.includes(n));
  if (missing.length > 0) throw new Error(`capacity: no figure for ${missing.map((n) => `${FIGURES[n].bench} ${FIGURES[n].figure}`).join(', ')}`);
  return out;
}

/** Validates a target; throws a message naming the flag. */
export function checkTarget(t) {
  const positive = (v, flag) => {
    if (!(typeof v === 'number' && Number.isFinite(v) && v > 0)) throw new Error(`capacity: ${flag} must be a number above 0 (got ${v})`);
  };
  positive(t.events, '--events');
  positive(t.bans, '--bans');
  if (!(Number.isInteger(t.regions) && t.regions >= 1)) throw new Error(`capacity: --regions must be a whole number from 1 (got ${t.regions})`);
  if (!(typeof t.headroom === 'number' && t.headroom >= 0 && t.headroom < 1)) throw new Error(`capacity: --headroom must be from 0 to below 1 (got ${t.headroom})`);
}

/**
 * The plan. `figures`: { name: { value, source } } for every FIGURES name;
 * `assumptions`: values by DEFAULT_ASSUMPTIONS name (defaults fill the rest).
 * Returns { target, figures, assumptions, rows, limits, propagation } where each row is
 * { item, perRegion, total, unit, from }.
 */
export function computePlan(target = DEFAULT_TARGET, figures, assumptionValues = {}) {
  checkTarget(target);
  const a = {};
  for (const [name, spec] of Object.entries(DEFAULT_ASSUMPTIONS)) {
    const value = assumptionValues[name] ?? spec.value;
    if (!(typeof value === 'number' && Number.isFinite(value) && value >= 0)) throw new Error(`capacity: ${spec.flag} must be a number from 0 (got ${value})`);
    a[name] = value;
  }
  if (!(a.replicationFactor >= 1 && Number.isInteger(a.replicationFactor))) throw new Error(`capacity: --rf must be a whole number from 1 (got ${a.replicationFactor})`);
  if (!(a.coresPerProcess >= 1 && Number.isInteger(a.coresPerProcess))) throw new Error(`capacity: --cores-per-process must be a whole number from 1 (got ${a.coresPerProcess})`);
  if (a.gatewayShare > 1) throw new Error(`capacity: --gateway-share must be from 0 to 1 (got ${a.gatewayShare})`);
  if (a.brokerMbPerS <= 0) throw new Error('capacity: --broker-mb must be above 0');
  const f = Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, v.value]));
  const use = 1 - target.headroom;
  const R = target.regions;
  const regionEvents = target.events / R;
  const rows = [];
  const row = (item, perRegion, unit, from, total = perRegion * R) => rows.push({ item, perRegion, total, unit, from });

  row('events', regionEvents, 'events/s', `${fmt(target.events)} events/s split evenly over ${R} regions (each region's edges send to their own region)`);

  // Aggregator: cores from CPU per event, then processes of coresPerProcess workers.
  // Cores from CPU per event, and from the measured rate per worker when known: the
  // larger (the rate was measured beside the broker on the same cores, so it is low).
  const byCpu = ceil((regionEvents * f.aggregatorCpuUsPerEvent) / 1e6 / use);
  const perWorker = f.aggregatorEventsPerS !== undefined && f.aggregatorWorkers ? f.aggregatorEventsPerS / f.aggregatorWorkers : undefined;
  const byRate = perWorker === undefined ? 0 : ceil(regionEvents / perWorker / use);
  const aggCores = Math.max(byCpu, byRate);
  const aggProcesses = Math.max(2, Math.ceil(aggCores / a.coresPerProcess));
  const workers = aggProcesses * a.coresPerProcess;
  const rateText = perWorker === undefined ? '' : `; by rate, events ÷ ${fmt(perWorker)} events/s per worker ÷ ${pct(use)} use = ${byRate}`;
  row('aggregator cores', aggCores, 'cores', `the larger of: events × ${f.aggregatorCpuUsPerEvent} µs CPU per event ÷ ${pct(use)} use = ${byCpu}${rateText}`);
  row('aggregator processes', aggProcesses, `processes of AGGREGATOR_WORKERS=${a.coresPerProcess}`, `cores ÷ ${a.coresPerProcess} per process, at least 2 per region so that one can die`);
  // Partitions: the key (client network) → partition mapping must not change under a
  // running aggregator (a new count moves keys and their windows), so leave room to double.
  const partitions = roundUp(Math.max(12, 2 * workers), 12);
  row(
    'events partitions (TOPIC_PARTITIONS)',
    partitions,
    'partitions',
    `a multiple of 12 ≥ 2 × ${workers} workers: the workers can double without changing the count (which would move keys and their windows)`,
    partitions * R,
  );
  const windowMb = (a.windowKeys * f.windowBytesPerKey) / 1e6;
  row(
    'aggregator window memory per process',
    windowMb / aggProcesses,
    'MB',
    `${fmt(a.windowKeys)} keys per region × ${f.windowBytesPerKey} bytes per key ÷ ${aggProcesses} processes (keys follow partitions)`,
    NaN,
  );

  // Ingest gateway.
  const gwEvents = regionEvents * a.gatewayShare;
  row('ingest gateway cores (Avro)', ceil((gwEvents * f.ingestAvroCpuUsPerEvent) / 1e6 / use), 'cores', `${pct(a.gatewayShare)} of events × ${f.ingestAvroCpuUsPerEvent} µs ÷ ${pct(use)} use`);
  row('ingest gateway cores (JSON)', ceil((gwEvents * f.ingestJsonCpuUsPerEvent) / 1e6 / use), 'cores', `the same with ${f.ingestJsonCpuUsPerEvent} µs (JSON batches)`);

  // Brokers: bytes written per broker, produce plus replication.
  const eventMbPerS = (regionEvents * f.eventBytes) / 1e6;
  row('events topic bytes in', eventMbPerS, 'MB/s', `events × ${f.eventBytes} bytes per event`);
  const brokers = Math.max(a.replicationFactor, Math.ceil((eventMbPerS * a.replicationFactor) / (a.brokerMbPerS * use)));
  row('brokers', brokers, 'brokers', `${fmt1(eventMbPerS)} MB/s × replication ${a.replicationFactor} ÷ (${a.brokerMbPerS} MB/s per broker × ${pct(use)} use), at least the replication factor`);
  const replicas = (TOPICS.partitioned * partitions + TOPICS.single) * a.replicationFactor;
  row(
    'partition replicas per broker',
    Math.ceil(replicas / brokers),
    'replicas',
    `(${TOPICS.partitioned} topics × ${partitions} + ${TOPICS.single} × 1) × ${a.replicationFactor} ÷ ${brokers} brokers`,
    NaN,
  );

  // Enforcer.
  const banMb = (target.bans * f.banBytes) / 1e6;
  const heapMb = roundUp(banMb / use, 256);
  row('enforcer ban cache per instance', banMb, 'MB', `${fmt(target.bans)} bans × ${f.banBytes} bytes per ban (every enforcer holds every ban it may need)`, NaN);
  row('enforcer heap per instance', heapMb, 'MB (--max-old-space-size)', `ban cache ÷ ${pct(use)} use, rounded up to 256 MB: the table doubles when half full`, NaN);
  row(
    'enforcer cores, in-process checks',
    ceil(regionEvents / f.localChecksPerS / use),
    'cores (spread over the edges)',
    `one check per event ÷ ${fmt(f.localChecksPerS)} checks/s per core ÷ ${pct(use)} use`,
  );
  row('enforcer sidecar processes', ceil(regionEvents / f.httpChecksPerS / use), 'processes', `one check per event ÷ ${fmt(f.httpChecksPerS)} checks/s per sidecar ÷ ${pct(use)} use`);

  // Limits the target runs into.
  const limits = [];
  const cap = ENFORCER_MAX_BANS;
  const setCap = target.bans > cap.default ? `: set ENFORCER_MAX_BANS to ${fmt(target.bans)}` : '';
  limits.push({
    ok: target.bans <= cap.ceiling,
    text: `bans per enforcer: at most ${fmt(cap.ceiling)} (the highest ENFORCER_MAX_BANS; V8 holds at most 16,777,216 entries in a Map); past ENFORCER_MAX_BANS (default ${fmt(cap.default)}) new bans are refused, counted and logged, never a crash; the target is ${fmt(target.bans)}${setCap}`,
  });
  const survivors = R - 1;
  if (R > 1) {
    const load = regionEvents / (regionEvents / use);
    const after = target.events / survivors / (regionEvents / use);
    limits.push({
      ok: after <= 1,
      text: `one region lost, its traffic moved to the other ${survivors}: each runs at ${pct(after)} of what it is sized for (${pct(load)} before)`,
    });
  }

  // Propagation: regional automatic bans, mirrored records to the other regions.
  const mirrorLagMs = 1.5 * a.rttMs + a.lingerMs + f.roundtripP99Ms;
  const propagation = {
    mirrorLagMs,
    rows: [
      { item: "automatic ban on its own region's bans topic", ms: f.banDelayP99Ms, from: `measured \`ban-latency\` p99: crossing record in Kafka to its ban on the bans topic` },
      { item: 'automatic ban, its own region', ms: f.propagationP99Ms, from: `measured \`propagation\` p99 (${fmt(f.propagationP99Ms)} ms), under load: bans are regional` },
      {
        item: 'MirrorMaker 2 lag, home region to another',
        ms: mirrorLagMs,
        from: `1.5 × ${a.rttMs} ms round trip (a fetch may have just left) + ${a.lingerMs} ms linger + ${fmt(f.roundtripP99Ms)} ms produce-and-consume p99 (measured)`,
      },
      {
        item: 'manual ban, policy or allowlist entry, another region',
        ms: mirrorLagMs + f.banFeedLagP99Ms,
        from: `mirror lag + ${fmt(f.banFeedLagP99Ms)} ms ban feed p99 (measured) in the remote region`,
      },
      {
        item: 'automatic ban if it were mirrored (not the design)',
        ms: f.propagationP99Ms + mirrorLagMs,
        from: 'local propagation p99 + mirror lag',
      },
    ],
  };
  return { target, figures, assumptions: a, rows, limits, propagation };
}

function ceil(x) {
  return Math.ceil(x - 1e-9);
}
function roundUp(x, step) {
  return Math.ceil(x / step - 1e-9) * step;
}
function round(x, digits) {
  return Number(x.toPrecision(digits));
}
function pct(x) {
  return `${Math.round(x * 100)}%`;
}
export function fmt(x) {
  if (!Number.isFinite(x)) return '–';
  return x.toLocaleString('en-US', { maximumFractionDigits: Math.abs(x) >= 100 ? 0 : 2 });
}
function fmt1(x) {
  return x.toLocaleString('en-US', { maximumFractionDigits: 1 });
}

const escape = (s) => String(s).replaceAll('|', '\\|');

/** The plan as Markdown (the section of docs/operations/capacity.md between its markers). */
export function renderMarkdown(plan) {
  const { target: t, figures, assumptions } = plan;
  const out = [];
  out.push(
    `Target: ${fmt(t.events)} events/s, ${fmt(t.bans)} live bans, ${t.regions} regions, headroom ${pct(t.headroom)} (every part sized to run at ${pct(1 - t.headroom)} of what it was measured to do).`,
    '',
    '| item | per region | all regions | unit | computed from |',
    '| --- | --- | --- | --- | --- |',
  );
  for (const r of plan.rows) out.push(`| ${r.item} | ${fmt(r.perRegion)} | ${fmt(r.total)} | ${r.unit} | ${escape(r.from)} |`);
  out.push('', '| propagation (p99) | ms | computed from |', '| --- | --- | --- |');
  for (const r of plan.propagation.rows) out.push(`| ${r.item} | ${fmt(r.ms)} | ${escape(r.from)} |`);
  out.push('', 'Limits:', '');
  for (const l of plan.limits) out.push(`- ${l.ok ? 'within' : '**exceeded**'}: ${l.text}`);
  out.push('', 'Measured figures used:', '', '| figure | value | unit | source |', '| --- | --- | --- | --- |');
  for (const [name, spec] of Object.entries(FIGURES)) {
    const fig = figures[name];
    if (fig) out.push(`| \`${spec.bench}\` \`${spec.figure}\` | ${fmt(fig.value)} | ${spec.unit} | ${escape(fig.source)} |`);
  }
  out.push('', 'Assumptions (each a flag):', '', '| assumption | value | unit | flag | source |', '| --- | --- | --- | --- | --- |');
  for (const [name, spec] of Object.entries(DEFAULT_ASSUMPTIONS)) out.push(`| ${name} | ${fmt(assumptions[name])} | ${spec.unit} | \`${spec.flag}\` | ${escape(spec.source)} |`);
  return `${out.join('\n')}\n`;
}

/** The plan as plain text for a terminal. */
export function renderText(plan) {
  const { target: t, figures, assumptions } = plan;
  const out = [`capacity plan: ${fmt(t.events)} events/s, ${fmt(t.bans)} live bans, ${t.regions} regions, headroom ${pct(t.headroom)}`, ''];
  const width = Math.max(...plan.rows.map((r) => r.item.length));
  for (const r of plan.rows) {
    const scope = Number.isFinite(r.total) ? ` per region (all regions ${fmt(r.total)})` : '';
    out.push(`  ${r.item.padEnd(width)}  ${fmt(r.perRegion)} ${r.unit}${scope}`, `  ${''.padEnd(width)}    ← ${r.from}`);
  }
  out.push('', 'propagation, p99:');
  for (const r of plan.propagation.rows) out.push(`  ${r.item}: ${fmt(r.ms)} ms  ← ${r.from}`);
  out.push('', 'limits:');
  for (const l of plan.limits) out.push(`  ${l.ok ? 'within  ' : 'EXCEEDED'} ${l.text}`);
  out.push('', 'figures:');
  for (const [name, spec] of Object.entries(FIGURES)) {
    const fig = figures[name];
    if (fig) out.push(`  ${spec.bench} ${spec.figure} = ${fmt(fig.value)} (${spec.unit})  ← ${fig.source}`);
  }
  out.push('', 'assumptions:');
  for (const [name, spec] of Object.entries(DEFAULT_ASSUMPTIONS)) out.push(`  ${name} = ${fmt(assumptions[name])} ${spec.unit} (${spec.flag})  ← ${spec.source}`);
  return `${out.join('\n')}\n`;
}

/** Replaces the text between the capacity markers; throws when they are missing. */
export const MARKERS = Object.freeze({ begin: '<!-- capacity:begin (generated by npm run docs:reference; do not edit) -->', end: '<!-- capacity:end -->' });
export function replaceSection(document, section) {
  const b = document.indexOf(MARKERS.begin);
  const e = document.indexOf(MARKERS.end);
  if (b < 0 || e < b) throw new Error(`capacity: the markers ${MARKERS.begin} … ${MARKERS.end} are missing from the document`);
  return `${document.slice(0, b + MARKERS.begin.length)}\n\n${section}\n${document.slice(e)}`;
}
