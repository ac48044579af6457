/**
 * npm run bench -- accuracy
 *
 * Replays a seeded synthetic trace (bench/trace.ts) through the window store and through
 * the exact sliding log with the same limit, and compares the decision each makes for
 * every request. Decision: allowed iff the count in the window including this request
 * is ≤ LIMIT. Both count every request, allowed or denied (observed-rate semantics: a
 * denied request still shows how fast the source is going), and both run in event-time
 * order with the request time as the watermark.
 *
 * The engine's store records exact event offsets for keys whose live count reaches
 * EXACT_FROM (WindowConfig.exactFrom), set from the limit as that field's documentation
 * asks a caller to set it from its policies: a tenth of the smallest limit.
 *
 * BENCH_SEED=n npm run bench -- accuracy replays another trace of the same classes; the
 * result file records the seed.
 *
 * `npm run bench -- accuracy --costs` gives every request a cost (a seeded draw: 85% cost
 * 1, 10% cost 3, 5% cost 10, so 1.65 on average), counts the sum of costs in both the
 * store and the exact log, and judges against a limit of 165 (the same traffic classes,
 * built for 100 requests, now near 165 cost units); it reports as `accuracy-costs`.
 *
 * The exact log is the reference; its own throughput is reported beside the engine's.
 * For context the same decisions are also made, in the same run, with the store's
 * upperBound (the conservative estimate: upper_bound_*), with the store without
 * exactFrom (span and shape model only: without_exact_from_*) and with plain N-bucket
 * interpolation (the Cloudflare estimate without the store's first/last spans).
 */
import { ExactSlidingLog, WindowStore } from '../packages/core/src/window/index.js';
import { benchSeed, median, note, report, sig } from './lib.js';
import { CLASSES, generateTrace, type SourceClass } from './trace.js';

const SEED = benchSeed(7_031_989);
const COSTS = process.argv.includes('--costs');
/** The costs mode's draw: cost 1 most of the time, 3 and 10 for the expensive requests. */
const COST_DRAW = [
  { cost: 1, share: 0.85 },
  { cost: 3, share: 0.1 },
  { cost: 10, share: 0.05 },
] as const;
const MEAN_COST = COST_DRAW.reduce((sum, d) => sum + d.cost * d.share, 0);
/** The requests per window the trace's classes are built around. */
const TRACE_LIMIT = 100;
/** What decisions are judged against: requests, or with costs the same traffic's sum of costs. */
const LIMIT = COSTS ? Math.round(TRACE_LIMIT * MEAN_COST) : TRACE_LIMIT;
/** A tenth of the limit: the events a key counts before it turns exact are few enough that modeling them rarely moves a decision. */
const EXACT_FROM = Math.ceil(LIMIT / 10);
const WINDOW_MS = 60_000;
const BUCKETS = 4;
const G = WINDOW_MS / BUCKETS;
const GRACE_MS = 5_000;
const DURATION_MS = 60 * 60_000;
const BASE = 1_700_000_040_000; // epoch ms, a multiple of G and of a minute
const THROUGHPUT_RUNS = 3;
const COUNTS: Record<SourceClass, number> = {
  steady: 72_000,
  poller: 10_000,
  bursty: 16_000,
  attacker_minute_edge: 400,
  attacker_bucket_edge: 400,
  attacker_window_edge: 400,
  attacker_span_decoy: 400,
  compliant_exact_edge: 400,
  attacker_flood: 600,
};

interface Decisions {
  allowed: Uint8Array;
  ms: number;
}

interface EngineDecisions extends Decisions {
  /** Most exact keys and most typed-array bytes seen at the eviction checkpoints. */
  peakExactKeys: number;
  peakBytes: number;
}

/** `exactFrom` null: the store without it (span and shape model only). */
function engineDecisions(times: Float64Array, sources: Uint32Array, costs: Uint8Array, h1: Uint32Array, h2: Uint32Array, upper = false, exactFrom: number | null = EXACT_FROM): EngineDecisions {
  const store = new WindowStore({ windowMs: WINDOW_MS, buckets: BUCKETS, graceMs: GRACE_MS, ...(exactFrom === null ? {} : { exactFrom }) });
  let peakExactKeys = 0;
  let peakBytes = 0;
  const allowed = new Uint8Array(times.length);
  const started = performance.now();
  for (let i = 0; i < times.length; i++) {
    const t = BASE + times[i]!;
    const s = sources[i]!;
    store.addHashed(h1[s]!, h2[s]!, t, costs[i]!, t);
    const count = upper ? store.upperBoundHashed(h1[s]!, h2[s]!, t) : store.estimateHashed(h1[s]!, h2[s]!, t);
    allowed[i] = count <= LIMIT ? 1 : 0;
    if ((i & 0xffff) === 0) {
      store.evictIdle(t, 4096); // as an aggregator would, a slice at a time
      peakExactKeys = Math.max(peakExactKeys, store.exactKeys);
      peakBytes = Math.max(peakBytes, store.byteLength);
    }
  }
  return { allowed, ms: performance.now() - started, peakExactKeys, peakBytes };
}

function exactDecisions(times: Float64Array, sources: Uint32Array, costs: Uint8Array, keys: string[]): Decisions {
  const log = new ExactSlidingLog({ windowMs: WINDOW_MS, retainMs: 0 });
  const allowed = new Uint8Array(times.length);
  const started = performance.now();
  for (let i = 0; i < times.length; i++) {
    const t = BASE + times[i]!;
    const key = keys[sources[i]!]!;
    log.add(key, t, costs[i]!);
    allowed[i] = log.count(key, t) <= LIMIT ? 1 : 0;
  }
  return { allowed, ms: performance.now() - started };
}

/** Cloudflare-style interpolation over whole buckets, no spans: context for the store's design. */
function plainInterpolation(times: Float64Array, sources: Uint32Array, costs: Uint8Array, sourceCount: number): Uint8Array {
  const r = BUCKETS + 1;
  const epoch = new Float64Array(sourceCount).fill(-Infinity);
  const counts = new Float64Array(sourceCount * r);
  const allowed = new Uint8Array(times.length);
  for (let i = 0; i < times.length; i++) {
    const t = BASE + times[i]!;
    const s = sources[i]!;
    const b = Math.floor(t / G);
    for (let e = Math.max(epoch[s]! + 1, b - r + 1); e <= b; e++) counts[s * r + (e % r)] = 0;
    epoch[s] = Math.max(epoch[s]!, b);
    counts[s * r + (b % r)]! += costs[i]!;
    let est = 0;
    for (let e = b - BUCKETS + 1; e <= b; e++) est += counts[s * r + (e % r)]!;
    const o = b - BUCKETS;
    est += (counts[s * r + (o % r)]! * ((o + 1) * G - (t - WINDOW_MS + 1))) / G;
    allowed[i] = est <= LIMIT ? 1 : 0;
  }
  return allowed;
}

interface Comparison {
  wrong: number;
  falseAllows: number;
  falseDenies: number;
  falseBans: number;
  wrongByClass: number[];
  falseBansByClass: number[];
}

function compare(exact: Uint8Array, other: Uint8Array, sources: Uint32Array, classOf: Uint8Array): Comparison {
  const exactDenied = new Uint8Array(classOf.length);
  const otherDenied = new Uint8Array(classOf.length);
  const c: Comparison = { wrong: 0, falseAllows: 0, falseDenies: 0, falseBans: 0, wrongByClass: CLASSES.map(() => 0), falseBansByClass: CLASSES.map(() => 0) };
  for (let i = 0; i < exact.length; i++) {
    const s = sources[i]!;
    if (exact[i] === 0) exactDenied[s] = 1;
    if (other[i] === 0) otherDenied[s] = 1;
    if (exact[i] === other[i]) continue;
    c.wrong++;
    c.wrongByClass[classOf[s]!]!++;
    if (other[i] === 1) c.falseAllows++;
    else c.falseDenies++;
  }
  // A false ban: a source no exact window ever found over the limit, denied at least once.
  for (let s = 0; s < classOf.length; s++) {
    if (otherDenied[s] === 1 && exactDenied[s] === 0) {
      c.falseBans++;
      c.falseBansByClass[classOf[s]!]!++;
    }
  }
  return c;
}

/** Max over sources and times of the requests allowed in one exact window, per class, over LIMIT. */
function overshoot(times: Float64Array, sources: Uint32Array, costs: Uint8Array, allowed: Uint8Array, keys: string[], classOf: Uint8Array): number[] {
  const log = new ExactSlidingLog({ windowMs: WINDOW_MS, retainMs: 0 });
  const worst = CLASSES.map(() => 0);
  for (let i = 0; i < times.length; i++) {
    if (allowed[i] === 0) continue;
    const key = keys[sources[i]!]!;
    const t = BASE + times[i]!;
    log.add(key, t, costs[i]!);
    const cls = classOf[sources[i]!]!;
    worst[cls] = Math.max(worst[cls]!, log.count(key, t) / LIMIT);
  }
  return worst;
}

function main(): void {
  note('generating the trace');
  const trace = generateTrace({ seed: SEED, durationMs: DURATION_MS, limit: TRACE_LIMIT, windowMs: WINDOW_MS, granularityMs: G, counts: COUNTS });
  const { times, sources, classOf } = trace;
  const costs = requestCosts(times.length);
  const keys: string[] = [];
  const h1 = new Uint32Array(classOf.length);
  const h2 = new Uint32Array(classOf.length);
  const pair = new Uint32Array(2);
  const fingerprints = new WindowStore({ windowMs: WINDOW_MS, buckets: BUCKETS, graceMs: GRACE_MS });
  for (let s = 0; s < classOf.length; s++) {
    keys.push(`accuracy|src:${s}`);
    fingerprints.fingerprintInto(keys[s]!, pair);
    h1[s] = pair[0]!;
    h2[s] = pair[1]!;
  }
  note(`${times.length} requests from ${classOf.length} sources; replaying`);
  const engineRuns: number[] = [];
  const exactRuns: number[] = [];
  let engine: EngineDecisions | undefined;
  let exact: Decisions | undefined;
  for (let run = 0; run < THROUGHPUT_RUNS; run++) {
    engine = engineDecisions(times, sources, costs, h1, h2);
    exact = exactDecisions(times, sources, costs, keys);
    engineRuns.push((times.length / engine.ms) * 1000);
    exactRuns.push((times.length / exact.ms) * 1000);
    note(`run ${run + 1}: engine ${Math.round(engineRuns[run]!)}/s, exact ${Math.round(exactRuns[run]!)}/s`);
  }
  const c = compare(exact!.allowed, engine!.allowed, sources, classOf);
  const plain = compare(exact!.allowed, plainInterpolation(times, sources, costs, classOf.length), sources, classOf);
  const upperAllowed = engineDecisions(times, sources, costs, h1, h2, true).allowed;
  const upper = compare(exact!.allowed, upperAllowed, sources, classOf);
  const coldOnly = compare(exact!.allowed, engineDecisions(times, sources, costs, h1, h2, false, null).allowed, sources, classOf);
  note('measuring overshoot');
  const worst = overshoot(times, sources, costs, engine!.allowed, keys, classOf);
  const upperWorst = overshoot(times, sources, costs, upperAllowed, keys, classOf);
  const decoy = CLASSES.indexOf('attacker_span_decoy');
  const requestsByClass = CLASSES.map(() => 0);
  for (let i = 0; i < sources.length; i++) requestsByClass[classOf[sources[i]!]!]!++;

  const perClass: Record<string, number> = {};
  CLASSES.forEach((cls, k) => {
    perClass[`requests_${cls}`] = requestsByClass[k]!;
    perClass[`wrong_decisions_${cls}`] = c.wrongByClass[k]!;
    perClass[`false_bans_${cls}`] = c.falseBansByClass[k]!;
    perClass[`worst_overshoot_ratio_${cls}`] = sig(worst[k]!, 4);
  });
  const engineRate = median(engineRuns);
  const exactRate = median(exactRuns);
  report(
    COSTS ? 'accuracy-costs' : 'accuracy',
    {
      seed: SEED,
      limit: LIMIT,
      ...(COSTS ? { costs: COST_DRAW.map((d) => `${d.cost}:${d.share}`).join(' '), mean_cost: MEAN_COST, trace_limit: TRACE_LIMIT } : {}),
      window_ms: WINDOW_MS,
      buckets: BUCKETS,
      bucket_ms: G,
      grace_ms: GRACE_MS,
      exact_from: EXACT_FROM,
      simulated_ms: DURATION_MS,
      sources_by_class: COUNTS,
      throughput_runs: THROUGHPUT_RUNS,
      decision: COSTS
        ? 'allowed iff the sum of costs in (t - W, t] including this request <= limit; every request counted for its cost (observed rate)'
        : 'allowed iff count in (t - W, t] including this request <= limit; every request counted (observed rate)',
      engine: 'WindowStore (exactFrom = limit / 10) addHashed + estimateHashed per request, evictIdle(t, 4096) every 65536 requests',
      reference: 'ExactSlidingLog (Map of per-key timestamp logs)',
    },
    {
      requests: times.length,
      sources: classOf.length,
      wrong_decisions: c.wrong,
      wrong_decision_pct: sig((100 * c.wrong) / times.length, 4),
      false_allows: c.falseAllows,
      false_denies: c.falseDenies,
      false_bans: c.falseBans,
      worst_overshoot_ratio: sig(Math.max(...worst), 4),
      engine_requests_per_s: Math.round(engineRate),
      exact_requests_per_s: Math.round(exactRate),
      engine_to_exact_speed_ratio: sig(engineRate / exactRate, 3),
      engine_peak_hot_keys: engine!.peakExactKeys,
      engine_peak_bytes: engine!.peakBytes,
      wrong_decision_pct_without_span_decoy: sig((100 * (c.wrong - c.wrongByClass[decoy]!)) / (times.length - requestsByClass[decoy]!), 4),
      upper_bound_wrong_decision_pct: sig((100 * upper.wrong) / times.length, 4),
      upper_bound_false_allows: upper.falseAllows,
      upper_bound_false_bans: upper.falseBans,
      upper_bound_worst_overshoot_ratio: sig(Math.max(...upperWorst), 4),
      plain_interpolation_wrong_decision_pct: sig((100 * plain.wrong) / times.length, 4),
      plain_interpolation_false_bans: plain.falseBans,
      without_exact_from_wrong_decision_pct: sig((100 * coldOnly.wrong) / times.length, 4),
      without_exact_from_false_bans: coldOnly.falseBans,
      ...perClass,
    },
  );
}

/** Every request's cost: 1 without --costs, else the seeded draw (its own stream, so the trace is the one without costs). */
function requestCosts(n: number): Uint8Array {
  const costs = new Uint8Array(n).fill(1);
  if (!COSTS) return costs;
  let state = (SEED ^ 0x9e3779b9) >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    // xorshift32: fast, seeded, enough for a cost draw.
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    const u = state / 2 ** 32;
    let acc = 0;
    for (const d of COST_DRAW) {
      acc += d.share;
      if (u < acc) {
        costs[i] = d.cost;
        break;
      }
    }
    if (u >= acc) costs[i] = COST_DRAW.at(-1)!.cost;
  }
  return costs;
}

main();
