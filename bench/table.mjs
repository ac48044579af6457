#!/usr/bin/env node
// Prints the README's Performance table (markdown) from bench/results/*.json: each
// figure beside the ceiling measured in the same run, the ratio, the target and the
// anchors. `npm run bench` ends with it; paste it into README.md after a full run.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const resultsDir = join(dirname(fileURLToPath(import.meta.url)), 'results');

// One row per headline figure. `ceiling` and `ratio` name figures of the same result.
const ROWS = [
  { bench: 'window', figure: 'updates_per_s', ceiling: 'ceiling_updates_per_s', ratio: 'updates_ratio_to_ceiling', target: '≥ 5,000,000', anchor: 'ceiling: a bare typed-array increment loop' },
  { bench: 'window', figure: 'bytes_per_key', ceiling: 'baseline_map_bytes_per_key', target: '≤ 64', anchor: 'baseline: a Map of window objects' },
  {
    bench: 'accuracy',
    figure: 'wrong_decision_pct',
    ceiling: 'plain_interpolation_wrong_decision_pct',
    target: '≤ 0.003',
    anchor: 'vs an exact sliding log; baseline: plain interpolation of the previous window (Cloudflare-style estimate)',
  },
  { bench: 'accuracy', figure: 'false_bans', ceiling: 'plain_interpolation_false_bans', target: '0', anchor: 'baseline: plain interpolation' },
  {
    bench: 'aggregator',
    figure: 'events_per_s',
    ceiling: 'ceiling_events_per_s',
    ratio: 'ratio',
    target: '≥ 500,000 and ≥ 0.7 of ceiling',
    anchor: 'AGGREGATOR_WORKERS = cores; Kafka Streams windowed count ~20,000 records/s per instance; bare kafkajs consumer ~127,000 msgs/s',
  },
  {
    bench: 'aggregator',
    figure: 'events_per_s',
    ceiling: 'ceiling_parallel_events_per_s',
    ratio: 'ratio_to_parallel_ceiling',
    target: '–',
    anchor: 'like for like: as many bare consumers side by side as workers',
  },
  { bench: 'aggregator', figure: 'cpu_us_per_event', target: '–', anchor: "CPU per event, all the service's processes (steadier than events/s; `npm run capacity` sizes cores with it)" },
  { bench: 'aggregator', figure: 'avg_event_bytes', target: '–', anchor: 'bytes per event on the events topic, the seeded trace (`npm run capacity` sizes brokers with it)' },
  { bench: 'aggregator', figure: 'events_per_s_one_worker', ceiling: 'ceiling_events_per_s', ratio: 'ratio_one_worker', target: '–', anchor: 'one aggregator process (AGGREGATOR_WORKERS=1)' },
  { bench: 'ban-latency', figure: 'ban_delay_p99_ms', ceiling: 'ceiling_roundtrip_p99_ms', target: '≤ 100', anchor: 'ceiling: bare produce-and-consume round trip' },
  { bench: 'ingest', figure: 'avro_events_per_s', ceiling: 'ceiling_events_per_s', ratio: 'ratio', target: '≥ 300,000', anchor: 'ceiling: bare kafkajs producer, same pre-encoded batches' },
  { bench: 'ingest', figure: 'json_events_per_s', ceiling: 'ceiling_events_per_s', ratio: 'json_ratio', target: '≥ 100,000', anchor: 'same ceiling' },
  { bench: 'ingest', figure: 'avro_cpu_us_per_event', target: '–', anchor: 'gateway CPU per event, Avro (`npm run capacity` sizes the gateway with it)' },
  { bench: 'ingest', figure: 'json_cpu_us_per_event', target: '–', anchor: 'gateway CPU per event, JSON' },
  { bench: 'ingest', figure: 'publish_ns_per_event', target: '≤ 1,000', anchor: 'EdgePublisher.publish() on the caller thread' },
  { bench: 'enforcer', figure: 'local_checks_per_s', ceiling: 'ceiling_lookups_per_s', ratio: 'local_ratio', target: '≥ 2,000,000', anchor: 'ceiling: a bare Map lookup loop, 1M bans' },
  { bench: 'enforcer', figure: 'local_checks_per_s_browser_headers', target: '–', anchor: "the same checks, each request with a browser's dozen headers (no policy reads them)" },
  { bench: 'enforcer', figure: 'floor_lookups_per_s', target: '–', anchor: 'the ban lookup alone (address to number, Int32Index probe, expiry from its row): an upper bound for local checks' },
  {
    bench: 'enforcer',
    figure: 'floor_with_attributes_checks_per_s',
    target: '–',
    anchor: "the request's attributes, then the address ban's denial (BanCache.addressDenial): a tighter upper bound (the probes' cache misses exposed as in a check)",
  },
  { bench: 'enforcer', figure: 'ban_cache_bytes_per_ban', target: '–', anchor: 'heap per ban held, 1M bans decoded as the bans feed does (`npm run capacity` sizes the heap with it)' },
  {
    bench: 'enforcer',
    figure: 'ban_bytes_per_entry',
    target: '≤ 64',
    anchor: 'heap per blocklist-feed ban: 100,000 (80% addresses, 20% networks) Avro-decoded into an empty BanCache after an untimed first fill; an HAProxy stick-table entry is about 50 B',
  },
  {
    bench: 'enforcer',
    figure: 'local_checks_per_s_with_feed',
    ceiling: 'local_checks_per_s_without_feed',
    ratio: 'feed_check_ratio',
    target: 'ratio ≥ 0.9',
    anchor: 'the 100,000 feed bans beside the million, rounds taking turns without and with them',
  },
  { bench: 'enforcer', figure: 'http_checks_per_s', ceiling: 'http_ceiling_per_s', ratio: 'http_ratio', target: 'ratio ≥ 0.8', anchor: 'ceiling: Fastify hello-world, same client' },
  {
    bench: 'enforcer',
    figure: 'http_checks_per_s',
    ceiling: 'http_batched_ceiling_per_s',
    ratio: 'http_ratio_to_batched_ceiling',
    target: '–',
    anchor: 'like for like: a hello-world batching its answers as the sidecar does',
  },
  { bench: 'enforcer', figure: 'http_unbatched_checks_per_s', ceiling: 'http_ceiling_per_s', ratio: 'http_unbatched_ratio', target: '–', anchor: 'the sidecar with ENFORCER_BATCH_ANSWERS=false' },
  {
    bench: 'enforcer',
    figure: 'redis_checks_per_s',
    ceiling: 'redis_ceiling_per_s',
    ratio: 'redis_ratio',
    target: 'ratio ≥ 0.75',
    anchor: 'ceiling: redis-benchmark -P 16 EVALSHA of the same script',
  },
  {
    bench: 'enforcer',
    figure: 'grpc_checks_per_s',
    ceiling: 'grpc_echo_per_s',
    ratio: 'grpc_ratio',
    target: 'ratio ≥ 0.8',
    anchor: 'ceiling: a bare grpc-js unary echo server, a message of the same size, same client',
  },
  {
    bench: 'enforcer',
    figure: 'grpc_check_cpu_us_per_call',
    ceiling: 'grpc_echo_cpu_us_per_call',
    ratio: 'grpc_cpu_ratio',
    target: '–',
    anchor: 'server CPU per call, net of idle: the check over the echo (steadier than rates on a shared machine)',
  },
  { bench: 'enforcer', figure: 'ban_feed_lag_p99_ms', target: '≤ 100', anchor: 'ban record sent → applied by an enforcer' },
  { bench: 'propagation', figure: 'p50_ms', ceiling: 'ceiling_roundtrip_p50_ms', target: '–', anchor: 'median of 100 attackers, same run' },
  {
    bench: 'propagation',
    figure: 'p99_ms',
    ceiling: 'ceiling_roundtrip_p99_ms',
    target: '≤ 250',
    anchor: 'CrowdSec bouncers poll every 10 s; Cloudflare "up to a few seconds"; AWS WAF "usually below 30 seconds"',
  },
  { bench: 'propagation', figure: 'background_events_per_s', target: '100,000', anchor: 'background load during the propagation run' },
  { bench: 'geo', figure: 'false_alerts_per_country_week', target: 'low (0 seen)', anchor: 'seeded diurnal traffic, 12 countries' },
  { bench: 'geo', figure: 'detection_delay_s', ceiling: 'oracle_delay_s', ratio: 'detection_delay_ratio', target: 'minutes', anchor: 'ceiling: an oracle that knows the usual rate' },
  {
    bench: 'failover',
    figure: 'events_lost',
    target: '0',
    anchor: 'events the gateway answered 202 for, missing from the events topic after a broker was killed with SIGKILL (three brokers, RF 3, min ISR 2)',
  },
  {
    bench: 'failover',
    figure: 'propagation_p99_ms_during_failover',
    ceiling: 'propagation_p99_ms',
    ratio: 'ratio_p99_failover_to_ceiling',
    target: '≤ 1,000',
    anchor: 'floods starting while the killed broker is down; ceiling: the same floods before the kill, same run',
  },
  {
    bench: 'failover',
    figure: 'recovery_s',
    target: '–',
    anchor:
      "broker killed to every partition led again and every service's /readyz 200 (the quorum notices it, elects a new controller if it was one, and fences it: 1 s timeouts on a stack of several nodes)",
  },
  {
    bench: 'leader-move',
    figure: 'write_after_move_ms_p50',
    ceiling: 'moved_ms_p50',
    ratio: 'ratio_written_to_moved_p50',
    target: '–',
    anchor: "a send acknowledged by a partition's new leader, after its election (the ratio: kill to write over kill to election)",
  },
  { bench: 'console', figure: 'console_js_gzip_kb', target: '≤ 150', anchor: "every script the web console's pages load, gzip -9" },
  {
    bench: 'console',
    figure: 'bans_usable_ms',
    ceiling: 'ceiling_bans_get_ms',
    ratio: 'bans_usable_ratio_to_ceiling',
    target: '≤ 1,000',
    anchor: "1,000,000 bans held by control: navigation start to the first rows rendered and the search enabled (Debian's chromium, headless); ceiling: a bare GET of the same first page of bans",
  },
  {
    bench: 'console',
    figure: 'overview_delay_p50_ms',
    ceiling: 'ceiling_overview_tick_ms',
    ratio: 'overview_delay_ratio_to_tick',
    target: '≤ 2,000',
    anchor: "a ban on the bans topic to the Overview's bans per minute changing in the page; ceiling: the push period (CONTROL_CONSOLE_TICK_MS)",
  },
  { bench: 'soak', figure: 'max_memory_slope_mb_per_min', target: '< 1 (flat)', anchor: '10 min at 50,000 events/s through the pipeline (`npm run soak`)' },
  { bench: 'soak', figure: 'max_lag_events', target: 'bounded', anchor: 'aggregator consumer lag during the soak' },
];

const format = (x) => (x === undefined ? '–' : typeof x === 'number' ? x.toLocaleString('en-US', { maximumFractionDigits: 4 }) : String(x));

function load(name) {
  const file = join(resultsDir, `${name}.json`);
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8').trim().split('\n').pop()) : undefined;
}

const results = new Map();
const lines = ['| benchmark | figure | value | ceiling (same run) | ratio | target | anchors |', '| --- | --- | --- | --- | --- | --- | --- |'];
for (const row of ROWS) {
  if (!results.has(row.bench)) results.set(row.bench, load(row.bench));
  const f = results.get(row.bench)?.figures;
  const value = f ? format(f[row.figure]) : 'not run';
  const ceiling = row.ceiling && f ? `${format(f[row.ceiling])} (\`${row.ceiling}\`)` : '–';
  const ratio = row.ratio && f ? format(f[row.ratio]) : '–';
  lines.push(`| \`${row.bench}\` | \`${row.figure}\` | ${value} | ${ceiling} | ${ratio} | ${row.target} | ${row.anchor} |`);
}
const machine = [...results.values()].find((r) => r)?.machine;
if (machine) lines.push('', `Machine: ${machine.cores} cores, ${machine.cpu}, Node ${machine.node}.`);
console.log(lines.join('\n'));
