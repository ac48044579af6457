/**
 * npm run bench -- aggregator
 *
 * Throughput of the aggregator service against a bare kafkajs consumer, on the local
 * stack (started if it is not running; KAFKA_BROKERS overrides it).
 *
 * A fresh topic set `bench-agg-<time>-<pid>.*.v1` (events: 12 partitions) is preloaded
 * with EVENTS synthetic request events (bench/aggregator/events.ts) packed, one
 * partition key (/24 or /48) per record, in RequestEventBatch records of at most 500
 * events. Event times end at the preload's start and cover as much time as keeps one
 * record within ~2 s (10 s for 2M events, at most 2 minutes): the aggregator does not
 * count an event more than its grace (5 s) behind its partition, and records are
 * produced in order of their first event. Three policies (per-IP ban, per-user
 * throttle, per-country alert; the longest window is 10 minutes, so the aggregator's
 * replay horizon covers the whole preload for the length of the run) are published first.
 * Then, RUNS times:
 * - the aggregator (`node services/aggregator/dist/main.js`, fresh AGGREGATOR_GROUP_ID)
 *   drains the topic; its rate is read off banstream_aggregator_events_consumed_total
 *   on /metrics, sampled every 50 ms, from the first sample above zero to the first at
 *   the total. Start-up (group join, policy load) is outside the timing.
 * - the ceiling: a bare kafkajs consumer (fresh group, eachBatch) decodes every record
 *   and counts its events, timed from the first batch to the last event.
 * - fetch-only: the same consumer without the decode (context: what kafkajs's fetch
 *   alone allows).
 * The ceiling and fetch-only drains run in fresh node processes, as cold as the service.
 * Figures: medians (and minimums) of both rates, their ratio, the preload rate and the
 * aggregator's peak RSS (max VmHWM over the runs). A run that does not reach the total
 * within BENCH_AGG_TIMEOUT_S (or whose counter stalls BENCH_AGG_STALL_S) sets
 * timed_out = 1 and reports its rate up to the last increase. The run's topics (all
 * under the prefix, the service's own included) and groups are deleted at the end.
 *
 * Environment: BENCH_AGG_EVENTS (2000000), BENCH_AGG_RUNS (3), BENCH_AGG_TIMEOUT_S (180),
 * BENCH_AGG_STALL_S (30), BENCH_AGG_START_S (60: no counted event that long after the
 * spawn ends the run); KAFKA_BROKERS (else the local stack). Development only:
 * BENCH_AGG_SKIP_SERVICE=1 measures the preload and the ceiling alone, and
 * BENCH_AGG_SERVICE_MAIN=path runs another build of the service (e.g. another worktree's).
 *
 * npm run bench -- aggregator --secure: over PLAINTEXT and SASL_SSL of one broker of the
 * run's own, interleaved (bench/aggregator/secure.ts says what is measured).
 *
 * npm run bench -- aggregator --costs: the same, with request costs (events cost 5 for a
 * login, 3 for one GET in ten, else 1; the per-IP ban policy weighs a login at 10 by its
 * `costs`), reported as `aggregator-costs`.
 *
 * This file only brings the build up to date (tsc -b, incremental) so that the
 * workspace packages resolve to current dist/ code and the service that runs is the
 * current source, then imports the benchmark.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { note } from './lib.js';
import { SECURE } from './secure.js';

const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
const skipService = process.env.BENCH_AGG_SKIP_SERVICE === '1';
const project = skipService ? 'packages/kafka' : 'services/aggregator';
const needed = skipService ? 'packages/kafka/dist/index.js' : 'services/aggregator/dist/main.js';

note(`building ${project} and its references (tsc -b)`);
const build = spawnSync(process.execPath, [fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url)), '-b', project], {
  cwd: REPO_ROOT,
  stdio: ['ignore', 'pipe', 'pipe'],
  encoding: 'utf8',
});
if (build.status !== 0) {
  process.stderr.write(`${build.stdout}${build.stderr}`);
  if (!existsSync(`${REPO_ROOT}${needed}`)) throw new Error(`tsc -b ${project} failed and ${needed} does not exist`);
  note(`tsc -b ${project} failed (output above): measuring the existing dist/ code`);
}

if (SECURE) {
  const { secureMain } = await import('./aggregator/secure.js');
  await secureMain(REPO_ROOT);
} else {
  const { main } = await import('./aggregator/main.js');
  await main(REPO_ROOT);
}
